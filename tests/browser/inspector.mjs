// The inspector's browser test (run by tests/browser/run.sh): drives the page `loom serve`
// serves in headless Chromium over three recorded runs and checks what an operator relies on.
//   LOOM_URL         the server, e.g. http://127.0.0.1:7420
//   CHROMIUM         the browser (/usr/bin/chromium)
//   PLAYWRIGHT_CORE  the playwright-core package folder (scripts/install-playwright.sh)
//   SCREENSHOT_DIR   where the screenshots go
// Runs: approve-me (parked on the approval of `publish`, offloaded results), tainted
// (completed, search's results untrusted), retry-me (parked retrying).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`inspector.mjs: set ${name} (tests/browser/run.sh does)`);
  return v;
};
const base = env('LOOM_URL').replace(/\/$/, '');
const shots = env('SCREENSHOT_DIR');
const { chromium } = createRequire(import.meta.url)(env('PLAYWRIGHT_CORE'));

const TIMEOUT = 30_000;  // the machines are slow: every wait is generous
const problems = [];     // JavaScript errors of the page, checked after every scenario

const browser = await chromium.launch({ executablePath: env('CHROMIUM'), headless: true,
                                        args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.setDefaultTimeout(TIMEOUT);
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
// An answer with an error status is logged too ("Failed to load resource"): the error banner
// checks cover those.
page.on('console', (m) => {
  if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
    problems.push(`console error: ${m.text()}`);
  }
});

const testid = (id, attrs = '') => `[data-testid="${id}"]${attrs}`;
const open = (hash) => page.goto(`${base}/${hash}`);

// Waits until the run view's status badge reads `status`.
async function statusIs(status, timeout = TIMEOUT) {
  await page.waitForFunction(
    (s) => document.querySelector('[data-testid="run-status"]')?.textContent === s, status,
    { timeout, polling: 250 })
    .catch(async () => {
      const shown = await page.locator(testid('run-status')).textContent().catch(() => '(none)');
      throw new Error(`the run's status stayed '${shown}', expected '${status}'`);
    });
}
// Fails when the error banner is showing.
async function noErrorBanner() {
  const banner = page.locator(testid('error-banner'));
  if (await banner.isVisible()) assert.fail(`error banner: ${await banner.textContent()}`);
}

const scenarios = [
  ['the run list shows the three runs with their statuses', async () => {
    await open('#/');
    await page.locator(testid('store')).filter({ hasText: /\S/ }).waitFor();
    for (const [id, status] of [['approve-me', 'parked'], ['tainted', 'completed'],
                                ['retry-me', 'retrying']]) {
      const row = page.locator(testid('run-row', `[data-id="${id}"]`));
      await row.waitFor().catch(() => { throw new Error(`no row for run ${id}`); });
      await page.locator(testid('run-row', `[data-id="${id}"][data-status="${status}"]`)).waitFor()
        .catch(async () => {
          throw new Error(`run ${id} shows status ${await row.getAttribute('data-status')}, expected ${status}`);
        });
      assert.equal((await row.locator(testid('row-status')).textContent()).trim(), status);
    }
    assert.equal(await page.locator(testid('read-only-badge')).isVisible(), false,
                 'a writable server shows no read-only badge');
    await noErrorBanner();
    await page.screenshot({ path: path.join(shots, 'inspector-runs.png'), fullPage: true });
  }],

  ['an offloaded tool result shows its envelope and loads its blob', async () => {
    await page.locator(testid('run-row', '[data-id="approve-me"]')).click();
    await page.waitForURL(/#\/runs\/approve-me$/);
    await statusIs('parked');
    const frame = page.locator(testid('tool-frame', '[data-offloaded="true"]'))
      .filter({ hasText: 'fetch_report' }).first();
    await frame.waitFor().catch(() => { throw new Error('no offloaded fetch_report frame in approve-me'); });
    assert.match(await frame.getAttribute('data-step-id'), /^claim-check#turn:\d+:tool:\d+$/);
    await frame.locator(testid('frame-toggle')).click();
    await frame.locator(testid('frame-body')).waitFor({ state: 'visible' });
    const envelope = frame.locator(testid('envelope'));
    await envelope.waitFor({ state: 'visible' });
    assert.match(await envelope.textContent(), /offloaded/);
    assert.match(await envelope.textContent(), /retained|reclaimable/);
    assert.match(await frame.locator(testid('frame-arguments')).textContent(), /"page"/,
                 'the expanded frame shows the call arguments');
    await frame.locator(testid('load-blob')).click();
    const blob = frame.locator(testid('blob-value'));
    await blob.waitFor({ state: 'visible' });
    assert.match(await blob.textContent(), /Quarterly report, page \d+/);
    // The approval is pending in the run view too; the page is writable, so Cancel is there.
    await page.locator(testid('approve-button')).first().waitFor();
    await page.locator(testid('cancel-button')).waitFor();
    assert.equal(await page.locator(testid('retry-button')).count(), 0, 'a parked run has no Retry');
    await noErrorBanner();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, 'inspector-run.png'), fullPage: true });
  }],

  ['untrusted tool results are fenced and name their origin', async () => {
    await open('#/runs/tainted');
    await statusIs('completed');
    const fenced = page.locator(testid('tool-frame', '[data-tainted="true"]'));
    await fenced.first().waitFor().catch(() => { throw new Error('no tainted frame in run tainted'); });
    const fence = fenced.first().locator(testid('taint-fence'));
    assert.ok(await fence.isVisible(), 'the taint fence is visible without expanding the frame');
    assert.match(await fence.textContent(), /untrusted: .*tool:search/);
    for (const name of await fenced.locator('.name').allTextContents()) {
      assert.equal(name, 'search', 'only search results are untrusted');
    }
    const trusted = page.locator(testid('tool-frame', '[data-tainted="false"]'));
    assert.ok(await trusted.count() > 0, 'fetch_report results are not fenced');
    assert.equal(await trusted.first().locator(testid('taint-fence')).count(), 0);
    assert.equal(await page.locator(testid('cancel-button')).count(), 0, 'an ended run has no Cancel');
    await noErrorBanner();
  }],

  ['approving from the inbox completes the run', async () => {
    await page.locator(testid('approvals-tab')).click();
    const card = page.locator(testid('approval', '[data-execution="approve-me"]'));
    await card.waitFor().catch(() => { throw new Error("approve-me's approval is not in the inbox"); });
    assert.match(await card.textContent(), /publish/);
    const stepId = await card.getAttribute('data-step-id');
    assert.match(stepId, /^claim-check#turn:\d+:tool:0$/);
    await card.locator(testid('approve-button', `[data-step-id="${stepId}"]`)).click();
    await page.locator(testid('notice')).waitFor({ state: 'visible' }).catch(async () => {
      throw new Error(`no success message after Approve` +
        (await page.locator(testid('error-banner')).isVisible()
          ? `; error banner: ${await page.locator(testid('error-banner')).textContent()}` : ''));
    });
    await noErrorBanner();
    await open('#/runs/approve-me');
    await statusIs('completed', 20_000);
    await open('#/approvals');
    await page.getByText('No approvals are waiting.').waitFor();
    assert.equal(await card.count(), 0, 'the approved call left the inbox');
  }],

  ['cancelling a retrying run', async () => {
    await open('#/runs/retry-me');
    await statusIs('retrying');
    await page.locator(testid('retry-button')).waitFor();
    const frames = page.locator(testid('tool-frame'));
    if (await frames.count()) {  // the failed attempt, when the timeline shows the step
      assert.ok(await page.locator(testid('attempt')).count() > 0, 'the failed attempt is shown');
    }
    await page.locator(testid('cancel-button')).click();
    await page.locator(testid('cancel-reason')).fill('browser test');
    await page.locator(testid('cancel-confirm')).click();
    await statusIs('cancelled');
    await noErrorBanner();
    assert.equal(await page.locator(testid('cancel-button')).count(), 0);
  }],
];

let failed = false;
for (const [i, [name, body]] of scenarios.entries()) {
  try {
    await body();
    assert.deepEqual(problems, [], 'the page logged errors');
    console.log(`ok ${i + 1} - ${name}`);
  } catch (e) {
    failed = true;
    const shot = path.join(shots, `failure-${i + 1}.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
    console.error(`not ok ${i + 1} - ${name}\n  ${String(e.stack || e).split('\n').join('\n  ')}` +
                  `\n  at ${page.url()} (screenshot ${shot})`);
    if (problems.length) console.error(`  page errors:\n    ${problems.join('\n    ')}`);
    break;  // each scenario builds on the state the ones before left
  }
}
await browser.close();
process.exit(failed ? 1 : 0);

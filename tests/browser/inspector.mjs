// The inspector's browser test (run by tests/browser/run.sh): drives the page `loom serve`
// serves in headless Chromium over three recorded runs and checks what an operator relies on.
//   LOOM_URL         the server, e.g. http://127.0.0.1:7420
//   CHROMIUM         the browser (/usr/bin/chromium)
//   PLAYWRIGHT_CORE  the playwright-core package folder (scripts/install-playwright.sh)
//   SCREENSHOT_DIR   where the screenshots go
// Runs: approve-me (parked on the approval of `publish`, offloaded results), tainted
// (completed, search's results untrusted and offloaded), retry-me (parked retrying after two
// attempts), deny-me (its publish call denied), deadline-me (waiting for an approval due in 2 h),
// plain-workflow (example.steps), sealed-run (sealed under alice; the server has no key).
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

  ['the run list searches, filters, sorts and says why runs wait', async () => {
    const row = (id) => page.locator(testid('run-row', `[data-id="${id}"]`));
    await row('deadline-me').waitFor();
    assert.match(await row('approve-me').locator(testid('park-note')).textContent(),
                 /^approval of claim-check#turn:3:tool:0$/);
    assert.match(await row('deadline-me').locator(testid('park-note')).textContent(), /decide by/);
    assert.match(await row('retry-me').locator(testid('park-note')).textContent(), /next attempt/);
    const cells = await row('tainted').locator('td').allTextContents();
    assert.match(cells[8], /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, 'an ended run shows when it ended');
    assert.match(cells[9], /\d+(\.\d)? (ms|s)|\dm/, 'and how long it took');
    // Search by id: the loaded rows narrow as one types; Enter opens an exact id.
    await page.locator(testid('id-search')).fill('tain');
    assert.equal(await row('tainted').isVisible(), true);
    assert.equal(await row('approve-me').isVisible(), false, 'rows that do not match are hidden');
    await page.locator(testid('id-search')).fill('nope');
    await page.locator(testid('id-search')).press('Enter');
    await page.locator(testid('error-banner')).filter({ hasText: 'No run with the id nope' }).waitFor();
    await page.locator('#error-close').click();
    await page.locator(testid('id-search')).fill('retry-me');
    await page.locator(testid('id-search')).press('Enter');
    await page.waitForURL(/#\/runs\/retry-me$/);
    await open('#/');
    await page.locator(testid('id-search')).fill('');
    // Filters by workflow and subject go to the server.
    await page.locator(testid('workflow-filter')).fill('publisher');
    await page.locator(testid('workflow-filter')).press('Enter');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="run-row"]')]
      .map((r) => r.dataset.id).sort().join(',') === 'deadline-me,deny-me', null, { polling: 250 });
    await page.locator(testid('workflow-filter')).fill('');
    await page.locator(testid('workflow-filter')).press('Enter');
    await page.locator(testid('subject-filter')).fill('alice');
    await page.locator(testid('subject-filter')).press('Enter');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="run-row"]')]
      .map((r) => r.dataset.id).join(',') === 'sealed-run', null, { polling: 250 });
    await page.locator(testid('subject-filter')).fill('');
    await page.locator(testid('subject-filter')).press('Enter');
    await row('approve-me').waitFor();
    // Sort: by started, newest first on a second click.
    const ids = () => page.locator(testid('run-row')).evaluateAll((rs) => rs.map((r) => r.dataset.id));
    await page.locator(testid('sort-started')).click();
    assert.equal((await ids())[0], 'approve-me', 'oldest first');
    await page.locator(testid('sort-started')).click();
    assert.equal((await ids()).at(-1), 'approve-me', 'newest first');
    assert.equal(await page.locator(testid('sort-started')).getAttribute('aria-sort'), 'descending');
    await page.locator(testid('sort-id')).click();
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
    // An agent run offers a jump to its latest turn.
    await page.locator(testid('jump-latest')).click();
    await page.waitForFunction(() => {
      const turns = document.querySelectorAll('[data-testid="turn"]');
      const r = turns[turns.length - 1]?.getBoundingClientRect();
      return r && r.top >= -2 && r.top < window.innerHeight;
    }, null, { polling: 250 });
  }],

  ['a denied call says it was denied, and why', async () => {
    await open('#/runs/deny-me');
    await statusIs('completed');
    const frame = page.locator(testid('tool-frame', '[data-status="denied"]'));
    await frame.waitFor().catch(() => { throw new Error('no denied publish frame in deny-me'); });
    const decision = await frame.locator(testid('decision')).textContent();
    assert.match(decision, /denied/);
    assert.match(decision, /not before the board meets/);
    assert.doesNotMatch(await page.locator(testid('timeline')).textContent(), /no result recorded/);
    await noErrorBanner();
  }],

  ['an approval deadline shows as a deadline with a countdown', async () => {
    await open('#/runs/deadline-me');
    await statusIs('parked');
    const frame = page.locator(testid('tool-frame', '[data-status="awaitingApproval"]'));
    await frame.waitFor();
    assert.match(await frame.locator(testid('countdown')).textContent(), /^in (1h 5\dm|2h 00m)$/);
    assert.match(await page.locator(testid('run-approvals')).textContent(), /decide by/);
    const timeline = await page.locator(testid('timeline')).textContent();
    assert.doesNotMatch(timeline, /approvalDeadline|wakeAt/, 'no internal pseudo-step');
    assert.equal(await page.locator(testid('step')).count(), 0, 'the deadline is not a step of its own');
    await noErrorBanner();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, 'inspector-approval.png'), fullPage: true });
  }],

  ['a workflow run shows no token fields', async () => {
    await open('#/runs/plain-workflow');
    await statusIs('completed');
    assert.doesNotMatch(await page.locator('dl.summary').textContent(), /tokens|model turns/);
    assert.equal(await page.locator(testid('jump-latest')).isVisible(), false);
    await noErrorBanner();
  }],

  ['a sealed run and an unknown run say what is wrong, in the page\'s terms', async () => {
    await open('#/runs/sealed-run');
    const sealed = page.locator(testid('run-unavailable'));
    await sealed.waitFor();
    assert.match(await sealed.textContent(), /sealed under subject 'alice'.*Restart `loom serve`/s);
    await open('#/runs/nope');
    const unknown = page.locator(testid('run-unavailable'));
    await unknown.filter({ hasText: 'No such run.' }).waitFor();
    await noErrorBanner();
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
    // An offloaded untrusted result: no preview, and its blob shown as data under a fence.
    const offloaded = fenced.and(page.locator('[data-offloaded="true"]')).first();
    await offloaded.waitFor().catch(() => { throw new Error('no offloaded tainted frame in run tainted'); });
    await offloaded.locator(testid('frame-toggle')).click();
    assert.match(await offloaded.locator(testid('envelope-digest')).textContent(), /never previewed/);
    await offloaded.locator(testid('load-blob')).click();
    const blob = offloaded.locator(testid('blob-value'));
    await blob.waitFor({ state: 'visible' });
    assert.doesNotMatch(await blob.textContent(), /__loomTaint/);
    assert.ok(await offloaded.locator(testid('frame-body')).locator(testid('taint-fence')).count() > 0,
              'the blob is fenced as untrusted');
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
    assert.equal(await page.locator(testid('notice')).isVisible(), false,
                 "the inbox's success message does not follow to another view");
    await statusIs('completed', 20_000);
    await open('#/approvals');
    await page.locator(testid('approval', '[data-execution="deadline-me"]')).waitFor();
    assert.equal(await card.count(), 0, 'the approved call left the inbox');
  }],

  ['cancelling a retrying run', async () => {
    await open('#/runs/retry-me');
    await statusIs('retrying');
    await page.locator(testid('retry-button')).waitFor();
    await page.locator(testid('turn')).first().waitFor();
    assert.equal(await page.locator(testid('turn', '[data-turn="1"]')).count(), 1,
                 "both attempts of the turn's call are in one turn card");
    assert.ok(await page.locator(testid('attempt')).count() >= 2, 'each failed attempt is shown');
    const attempts = (await page.locator(testid('attempt')).allTextContents()).join('\n');
    assert.doesNotMatch(attempts, /\{"code"/, 'errors read as text, not escaped JSON');
    assert.equal(await page.locator(testid('last-error')).count(), 1, 'the last error is shown once');
    await page.locator(testid('cancel-button')).click();
    await page.locator(testid('cancel-reason')).fill('browser test');
    await page.locator(testid('cancel-confirm')).click();
    await statusIs('cancelled');
    await noErrorBanner();
    assert.equal(await page.locator(testid('cancel-button')).count(), 0);
  }],

  ['a failed run is rerun, and a tool call forked, each as a new run the page opens', async () => {
    const leftRun = (id) => page.waitForFunction(
      (old) => location.hash.startsWith('#/runs/') && !location.hash.includes(old), id,
      { timeout: TIMEOUT, polling: 250 });
    await open('#/runs/failed-run');
    await statusIs('failed');
    await page.locator(testid('rerun-button')).click();
    await leftRun('failed-run');
    await statusIs('completed');  // its step's folder exists now
    await noErrorBanner();
    await open('#/runs/approve-me');
    await statusIs('completed');
    assert.equal(await page.locator(testid('rerun-button')).count(), 0, 'a completed run has no Rerun');
    const frame = page.locator(testid('tool-frame', '[data-status="completed"]')).first();
    await frame.locator(testid('frame-toggle')).click();
    await frame.locator(testid('fork-button')).click();
    await leftRun('approve-me');
    await page.waitForFunction(
      () => ['parked', 'completed'].includes(document.querySelector('[data-testid="run-status"]')?.textContent),
      null, { timeout: TIMEOUT, polling: 250 });
    await noErrorBanner();
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

// Ten browsers watching: opens WATCHERS headless Chromium pages (separate contexts) on the
// inspector at LOOM_URL, half on the run list and half on run RUN_ID, for SECONDS_TO_WATCH
// seconds while the page polls; samples the server's (SERVER_PID) resident memory twice a
// second and prints its peak and the requests the pages made.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const url = process.env.LOOM_URL;
const watchers = Number(process.env.WATCHERS || 10);
const seconds = Number(process.env.SECONDS_TO_WATCH || 30);
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${process.env.SERVER_PID}/status`, 'utf8'))[1]);

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ['--no-sandbox'] });
let requests = 0;
const firstTurnMs = [];
const firstRowMs = [];
for (let i = 0; i < watchers; i++) {
  const page = await (await browser.newContext()).newPage();
  page.on('request', () => { requests += 1; });
  const started = Date.now();
  await page.goto(i % 2 === 0 ? `${url}/` : `${url}/#/runs/${process.env.RUN_ID}`);
  if (i % 2 === 1) {
    await page.locator('[data-testid="turn"]').first().waitFor({ timeout: 60000 });
    firstTurnMs.push(Date.now() - started);
  } else {
    await page.locator('[data-testid="run-row"]').first().waitFor({ timeout: 60000 });
    firstRowMs.push(Date.now() - started);
  }
}
const summary = (ms) => {
  ms.sort((a, b) => a - b);
  return `median ${ms[ms.length >> 1]} ms [${ms[0]}-${ms[ms.length - 1]}] over ${ms.length} pages`;
};
console.log(`navigation to the first run shown in the list: ${summary(firstRowMs)}`);
console.log(`navigation to the long run's first turn shown: ${summary(firstTurnMs)}`);
const samples = [];
const until = Date.now() + seconds * 1000;
while (Date.now() < until) {
  samples.push(rssKb());
  await new Promise((r) => setTimeout(r, 500));
}
await browser.close();
samples.sort((a, b) => a - b);
console.log(`server RSS while ${watchers} pages watched for ${seconds} s: median ${samples[samples.length >> 1]} kB, peak ${samples[samples.length - 1]} kB; ${requests} requests`);

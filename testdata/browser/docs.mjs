// Loads the API reference (/docs) in Debian's headless Chromium with every
// other origin blocked: each request to another origin is aborted and
// recorded, as is each Content-Security-Policy violation and page error.
// Reads {"url", "title", "operation", "screenshot"?} as JSON on stdin;
// prints {"heading", "operation", "blocked", "violations", "errors"} as JSON.
import { input, withPage } from './browser.mjs';

const { url, title, operation, screenshot } = await input();
const origin = new URL(url).origin;

await withPage({}, async (page) => {
  const blocked = [];
  const errors = [];
  await page.route('**/*', (route) => {
    const target = route.request().url();
    if (target.startsWith('data:') || target.startsWith('blob:') || new URL(target).origin === origin) {
      return route.continue();
    }
    blocked.push(target);
    return route.abort('blockedbyclient');
  });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  const res = await page.goto(url);
  if (!res || res.status() !== 200) throw new Error(`${url} answered ${res && res.status()}`);
  const heading = (await page.getByRole('heading', { name: title }).first().textContent({ timeout: 30_000 })).trim();
  const op = (await page.getByText(operation, { exact: true }).first().textContent()).trim();
  await page.waitForLoadState('networkidle');
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
  const violations = await page.evaluate(() => window.__violations);
  console.log(JSON.stringify({ heading, operation: op, blocked, violations, errors }));
});

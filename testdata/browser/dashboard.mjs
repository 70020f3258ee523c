// Uses the merchant dashboard (/dashboard) as a person would, in Debian's
// headless Chromium with every request to another origin refused (and
// recorded) and every Content-Security-Policy violation recorded. It signs
// in with the secret key, reads the balances, watches a deposit made
// through REST arrive in "Live activity" (and another one made while the
// page's WebSocket was dropped), filters the transactions and downloads
// their CSV, opens one transaction, creates a webhook endpoint and sends it
// a test event, then rolls the keys with an overlap; signed out, it signs
// in again with the live key. On every page axe-core looks for
// accessibility violations, and a screenshot is taken. Reads {"url",
// "key", "liveKey", "depositUrl", "depositBody", "hookUrl", "overlap",
// "shots", "csv", "timezoneId"} as JSON on stdin; prints what it saw as
// JSON. Exits non-zero when the browser itself fails or a step does not
// happen in time.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { input, withPage } from './browser.mjs';

const { url, key, liveKey, depositUrl, depositBody, hookUrl, overlap, shots, csv, timezoneId } = await input();
const origin = new URL(url).origin;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const seen = {
  foreign: [],
  violations: [],
  pageErrors: [],
  csp: null,
  a11y: {}, // page → serious or critical axe violations
  shots: [],
  graphql: [],
  urls: [], // every same-origin request's URL: the key must be in none
};

// deposit makes a sandbox deposit through REST, as another system would,
// and returns its reference.
async function deposit() {
  const res = await fetch(depositUrl, {
    method: 'POST',
    headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(depositBody),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`sandbox deposit answered ${res.status}: ${JSON.stringify(body)}`);
  return body.data.reference;
}

// check runs axe-core on the page as it is and keeps the serious and
// critical violations, then takes the page's screenshot.
async function check(page, name) {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  seen.a11y[name] = found;
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  seen.shots.push(path);
}

const nav = (page, name) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

await withPage({ acceptDownloads: true, timezoneId, locale: 'en-US' }, async (page) => {
  try {
    console.log(JSON.stringify(await run(page)));
  } catch (e) {
    await page.screenshot({ path: join(shots, 'failed.png'), fullPage: true });
    console.error(JSON.stringify(seen, null, 1));
    throw e;
  }
});

async function run(page) {
  const out = {};
  await page.context().route('**', (route) => {
    const u = new URL(route.request().url());
    if (u.origin === origin || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    seen.foreign.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  page.on('request', (r) => seen.urls.push(r.url()));
  // What the page asked and was answered, printed when a step fails.
  page.on('response', async (r) => {
    if (!r.url().endsWith('/graphql')) return;
    const asked = (r.request().postData() ?? '').slice(-300);
    const answer = (await r.text().catch(() => "")).slice(0, 1500);
    seen.graphql.push(`${asked} => ${r.status()} ${answer}`);
  });
  page.on('websocket', (ws) => {
    seen.urls.push(ws.url());
    if (new URL(ws.url()).host !== new URL(origin).host) seen.foreign.push(ws.url());
  });
  page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (/content security policy/i.test(m.text())) seen.violations.push(m.text());
  });
  await page.exposeFunction('reportViolation', (v) => seen.violations.push(v));
  // The page's WebSockets, so that the test can drop the live feed's
  // connection as a network would.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.reportViolation(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
    });
    const Native = window.WebSocket;
    window.__sockets = [];
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        window.__sockets.push(this);
      }
    };
  });

  // Sign in.
  const res = await page.goto(url);
  if (!res || res.status() !== 200) throw new Error(`GET ${url} answered ${res && res.status()}`);
  seen.csp = res.headers()['content-security-policy'] ?? null;
  await page.getByLabel('Secret key').waitFor();
  await check(page, 'sign-in');
  // By keyboard only: Tab to the field, type the key, Enter.
  await page.keyboard.press('Tab');
  out.firstFocus = await page.evaluate(() => document.activeElement?.labels?.[0]?.textContent ?? document.activeElement?.tagName);
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await nav(page, 'Overview').waitFor();
  out.stored = await page.evaluate(() => Object.values(sessionStorage));
  out.links = await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link').allTextContents();
  out.banner = await page.getByRole('note', { name: 'Test mode' }).textContent();

  // Overview: the balances, then the live feed.
  const balances = page.getByRole('table', { name: 'Balances' });
  await balances.locator('tbody tr').first().waitFor();
  out.balances = await balances.locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.children].slice(0, 3).map((c) => c.textContent.trim())),
  );
  // Times in the browser's zone (set by the test), UTC on hover.
  out.time = await balances.locator('time').first().evaluate((t) => ({ text: t.textContent, title: t.title, iso: t.dateTime }));
  const live = page.getByRole('region', { name: 'Live activity' });
  out.liveAttr = await live.getAttribute('aria-live');
  await live.locator('.live-state.live').waitFor();
  let start = Date.now();
  const first = await deposit();
  await live.locator(`li:has-text("${first}")`).waitFor({ timeout: 10_000 });
  out.liveMs = Date.now() - start;
  out.liveRef = first;

  // Drop the feed's connection: the deposit made meanwhile arrives once
  // the feed reconnects, resumed from the last event it saw.
  await page.evaluate(() => window.__sockets.at(-1).close(4000, 'dropped by the test'));
  const missed = await deposit();
  await live.locator(`li:has-text("${missed}")`).waitFor({ timeout: 10_000 });
  await live.locator('.live-state.live').waitFor();
  out.resumedRef = missed;
  out.sockets = await page.evaluate(() => window.__sockets.length);
  out.feed = await live.locator('li').allTextContents();
  await page.waitForTimeout(600); // the balances asked again after the events
  await check(page, 'overview');

  // Transactions: filter, read the rows, download the CSV.
  await nav(page, 'Transactions').click();
  const table = page.getByRole('table', { name: 'Transactions' });
  await table.locator('tbody tr').first().waitFor();
  await page.getByLabel('Type', { exact: true }).selectOption('DEPOSIT');
  await page.getByLabel('Status', { exact: true }).selectOption('SUCCESS');
  await page.getByLabel('Currency', { exact: true }).selectOption('NGN');
  // Yesterday to today, whole days of the browser's zone (not this
  // script's: the two differ around midnight).
  const [from, to] = await page.evaluate(() => {
    const day = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    return [day(new Date(Date.now() - 86_400_000)), day(new Date())];
  });
  await page.getByLabel('From', { exact: true }).fill(from);
  await page.getByLabel('To', { exact: true }).fill(to);
  const listed = page.waitForResponse((r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('"createdFrom"'));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await listed;
  await page.waitForFunction(() => !document.querySelector('main .loading'));
  out.rows = await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
  await check(page, 'transactions');
  const link = page.getByRole('link', { name: 'Download CSV' });
  await page.waitForFunction(() => /token=/.test(document.querySelector('.export a')?.getAttribute('href') ?? ''));
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  await download.saveAs(csv);
  out.exportHref = await link.getAttribute('href');

  // Search by the merchant's reference or ours: one row.
  await page.getByLabel('Reference', { exact: true }).fill(first);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForFunction(
    (ref) => {
      const rows = document.querySelectorAll('table tbody tr');
      return rows.length === 1 && rows[0].textContent.includes(ref);
    },
    first,
  );
  out.searched = await table.locator('tbody tr').count();

  // One transaction's detail.
  await table.getByRole('link', { name: first }).click();
  await page.getByRole('heading', { name: `Transaction ${first}` }).waitFor();
  await page.getByRole('heading', { name: 'Status history' }).waitFor();
  out.detail = await page.locator('main dl.facts').first().textContent();
  await check(page, 'transaction');

  // Balance history and wallets.
  await nav(page, 'Balance history').click();
  const history = page.getByRole('table', { name: /^Balance history/ });
  await history.locator('tbody tr').first().waitFor();
  out.history = await history.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
  await check(page, 'balance-history');
  await nav(page, 'Wallets').click();
  await page.getByRole('table', { name: 'Wallets' }).locator('tbody tr').first().waitFor();
  await page.getByRole('table', { name: 'Indicative rates' }).locator('tbody tr').first().waitFor();
  await page.getByLabel('Amount').fill('100');
  await page.getByRole('button', { name: 'Get quote' }).click();
  out.quote = await page.getByRole('status', { name: 'Quote' }).textContent();
  await check(page, 'wallets');

  // Developers: a webhook endpoint and its test delivery.
  await nav(page, 'Developers').click();
  await page.getByLabel('Endpoint URL').fill(hookUrl);
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  const endpoints = page.getByRole('table', { name: 'Webhook endpoints' });
  const row = endpoints.locator('tbody tr', { hasText: hookUrl });
  await row.waitFor();
  await row.getByRole('button', { name: 'Send test event' }).click();
  const deliveries = page.getByRole('table', { name: 'Webhook deliveries' });
  const ping = deliveries.locator('tbody tr', { hasText: 'ping' }).filter({ hasText: 'Attempt 1' });
  await ping.first().waitFor({ timeout: 15_000 });
  out.delivery = await ping.first().textContent();
  await check(page, 'developers');
  // "Resend": a second attempt on the same delivery.
  await ping.first().getByRole('button', { name: 'Resend' }).click();
  const again = deliveries.locator('tbody tr', { hasText: 'ping' }).filter({ hasText: 'Attempt 2' });
  await again.first().waitFor({ timeout: 15_000 });
  out.resent = await again.first().textContent();

  // Disable it, then delete it after the confirmation step.
  await row.getByRole('button', { name: 'Disable' }).click();
  await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.getByRole('button', { name: 'Confirm delete' }).click();
  await row.waitFor({ state: 'detached' });
  out.endpointsLeft = await endpoints.locator('tbody tr', { hasText: hookUrl }).count();

  // Roll the keys with an overlap, after the confirmation step.
  await page.getByLabel('Overlap in seconds').fill(String(overlap));
  await page.getByRole('button', { name: 'Roll keys' }).click();
  await page.getByRole('button', { name: 'Confirm roll' }).click();
  out.newKey = await page.locator('#new-secret-key').textContent();
  const keys = page.getByRole('table', { name: 'API keys' }).locator('tbody tr');
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length > 0);
  await keys.nth(3).waitFor();
  out.keysAfterRoll = await keys.evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
  await page.getByRole('heading', { name: 'API keys' }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, 'developers-rolled.png'), fullPage: true });
  seen.shots.push(join(shots, 'developers-rolled.png'));
  // The tab goes on with the new key.
  out.storedAfterRoll = await page.evaluate(() => Object.values(sessionStorage));

  // Sandbox: fund a balance.
  await nav(page, 'Sandbox').click();
  const fund = page.getByRole('form', { name: 'Fund a balance' });
  await fund.getByLabel('Amount', { exact: true }).fill('250.5');
  await fund.getByRole('button', { name: 'Fund balance' }).click();
  out.funded = await page.getByRole('status').filter({ hasText: 'available is now' }).textContent();
  await check(page, 'sandbox');

  // Sign out forgets the key.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Secret key').waitFor();
  out.storedAfterSignOut = await page.evaluate(() => Object.values(sessionStorage));

  // A live key: no Sandbox, no test-mode banner.
  await page.getByLabel('Secret key').fill(liveKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await nav(page, 'Overview').waitFor();
  out.liveLinks = await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link').allTextContents();
  out.liveBanners = await page.getByRole('note', { name: 'Test mode' }).count();
  await page.getByRole('table', { name: 'Balances' }).locator('tbody tr').first().waitFor();
  return { ...seen, ...out };
}

// Uses the service's GraphiQL as a person would, in Debian's headless
// Chromium, with every request to another origin refused (and recorded)
// and every Content-Security-Policy violation recorded: opens /graphql,
// reads the "paste your key" state, pastes the key into the headers
// editor, runs `{ me { id mode } }`, then starts a subscription and asks
// the service (depositUrl, a sandbox deposit to depositBody's account) for
// events until one arrives in the result pane. Reads {"url", "key",
// "depositUrl", "depositBody", "screenshot"} as JSON on stdin; prints what
// it saw as JSON. Exits non-zero when the browser itself fails or a step
// does not happen in time.
import { input, withPage } from './browser.mjs';

const { url, key, depositUrl, depositBody, screenshot } = await input();
const origin = new URL(url).origin;
const wsOrigin = origin.replace(/^http/, 'ws');

const seen = {
  foreign: [], // requests to another origin (all refused)
  violations: [], // CSP violations: securitypolicyviolation events and console reports
  pageErrors: [],
  requests: [], // same-origin requests: method and path
  sockets: [],
  csp: null,
};

// paste replaces an editor's text as a person pasting would (typed text
// would meet the editor's automatic closing of quotes and brackets).
async function paste(page, editor, value) {
  await editor.click();
  await page.keyboard.press('Control+A');
  await editor.locator('textarea').evaluate((area, value) => {
    const data = new DataTransfer();
    data.setData('text/plain', value);
    area.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, value);
}

// text reads what a monaco editor shows (it renders spaces as U+00A0).
const text = (locator) => locator.evaluate((el) => el.innerText.replace(/\u00a0/g, ' '));

await withPage({}, async (page) => {
  try {
    await run(page);
  } catch (e) {
    // What the page showed when a step failed, beside the screenshots.
    if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, '-failed.png'), fullPage: true });
    console.error(JSON.stringify(seen));
    throw e;
  }
});

async function run(page) {
  const context = page.context();
  await context.route('**', (route) => {
    const u = new URL(route.request().url());
    if (u.origin === origin || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    seen.foreign.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin === origin) seen.requests.push(`${r.method()} ${u.pathname}`);
  });
  page.on('websocket', (ws) => {
    seen.sockets.push(ws.url());
    if (!ws.url().startsWith(wsOrigin + '/')) seen.foreign.push(ws.url());
  });
  page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (/content security policy/i.test(m.text())) seen.violations.push(m.text());
  });
  page.on('worker', (w) => {
    w.on('console', (m) => {
      if (/content security policy/i.test(m.text())) seen.violations.push(`worker: ${m.text()}`);
    });
  });
  await page.exposeFunction('reportViolation', (v) => seen.violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.reportViolation(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });

  const res = await page.goto(url);
  if (!res || res.status() !== 200) throw new Error(`GET ${url} answered ${res && res.status()}`);
  seen.csp = res.headers()['content-security-policy'] ?? null;

  // Without a key: the page says what to do, and asks the service nothing.
  const banner = page.locator('#no-key');
  await banner.waitFor();
  const noKey = await banner.textContent();
  const resultPane = page.locator('section.result-window');
  const queryEditor = page.locator('.graphiql-query-editor .graphiql-editor .monaco-editor');
  await queryEditor.waitFor();
  const postsWithoutKey = seen.requests.filter((r) => r === 'POST /graphql').length;

  // The headers editor (open, pre-filled with X-API-KEY): replace its text.
  const headersEditor = page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .monaco-editor');
  const headersBefore = await text(headersEditor);
  await paste(page, headersEditor, JSON.stringify({ 'X-API-KEY': key }));
  await banner.waitFor({ state: 'detached' });

  // The schema's docs load with the key.
  await page.getByRole('button', { name: /documentation explorer/i }).click();
  const docs = page.locator('.graphiql-doc-explorer');
  await docs.getByText('Query', { exact: true }).first().waitFor();
  const docsText = (await docs.textContent()).slice(0, 200);

  // Run the default query, { me { id mode } }.
  await page.locator('button.graphiql-execute-button').click();
  await page.waitForFunction(
    () => /"mode":\s*"TEST"/.test(document.querySelector('section.result-window')?.innerText.replace(/\u00a0/g, ' ') ?? ''),
  );
  const queryResult = await text(resultPane);
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  // A subscription: started over the same origin's WebSocket, it shows
  // the events the service sends.
  await paste(page, queryEditor, 'subscription { events { id event } }');
  await page.locator('button.graphiql-execute-button').click();
  await page.getByRole('button', { name: /^Stop query/ }).waitFor();
  let eventResult = '';
  for (let i = 0; i < 20 && !eventResult; i++) {
    const dep = await fetch(depositUrl, {
      method: 'POST',
      headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(depositBody),
    });
    if (dep.status !== 200) throw new Error(`sandbox deposit answered ${dep.status}: ${await dep.text()}`);
    try {
      await page.waitForFunction(
        () => /"event":\s*"deposit\./.test(document.querySelector('section.result-window')?.innerText.replace(/\u00a0/g, ' ') ?? ''),
        null,
        { timeout: 3_000 },
      );
      eventResult = await text(resultPane);
    } catch (e) {
      if (e.name !== 'TimeoutError') throw e;
    }
  }
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, '-subscription.png'), fullPage: true });

  console.log(JSON.stringify({ ...seen, noKey, postsWithoutKey, headersBefore, docsText, queryResult, eventResult }));
}

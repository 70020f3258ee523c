// Calls the REST API from a merchant's own page, as a browser does, in
// Debian's headless Chromium: opens pageUrl (another origin than the API)
// and runs fetch() there for each call. Reads {"pageUrl", "calls": [{"url",
// "key"}]} as JSON on stdin; prints, for each call, {"status", "code"} when
// the page could read the answer, or {"error"} when the browser refused it
// (CORS). Exits non-zero only when the browser itself fails.
import { input, withPage } from './browser.mjs';

const { pageUrl, calls } = await input();

await withPage({}, async (page) => {
  const res = await page.goto(pageUrl);
  if (!res || res.status() !== 200) throw new Error(`the page answered ${res && res.status()}`);
  const out = await page.evaluate(async (calls) => {
    const results = [];
    for (const { url, key } of calls) {
      try {
        const r = await fetch(url, { headers: { 'X-API-KEY': key } });
        const body = await r.json();
        results.push({ status: r.status, code: body.code ?? null, requestId: r.headers.get('X-Request-Id') });
      } catch (e) {
        results.push({ error: String(e) });
      }
    }
    return results;
  }, calls);
  process.stdout.write(JSON.stringify(out));
});

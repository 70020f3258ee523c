// Pays a hosted crypto-pay checkout as a person would, in Debian's headless
// Chromium: opens the page, reads the amount, clicks Pay and waits to land
// on the merchant's success URL. Reads {"url", "amount", "currency",
// "successPrefix", "screenshot"?} as JSON on stdin; prints what it saw as
// JSON. Exits non-zero on any mismatch.
import { input, withPage } from './browser.mjs';

const { url, amount, currency, successPrefix, screenshot } = await input();

await withPage({ javaScriptEnabled: false }, async (page) => {
  const res = await page.goto(url);
  if (!res || res.status() !== 200) throw new Error(`checkout answered ${res && res.status()}`);
  const shownAmount = (await page.locator('#amount').textContent()).trim();
  const shownCurrency = (await page.locator('#currency').textContent()).trim();
  if (shownAmount !== amount || shownCurrency !== currency) {
    throw new Error(`page shows ${shownAmount} ${shownCurrency}, want ${amount} ${currency}`);
  }
  await page.getByText(`${amount} ${currency}`, { exact: false }).first().waitFor();
  const qr = await page.locator('#qr').evaluate((img) => ({ complete: img.complete, width: img.naturalWidth }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(successPrefix)),
    page.getByRole('button', { name: /^Pay/ }).click(),
  ]);
  console.log(JSON.stringify({ amount: shownAmount, currency: shownCurrency, qr, landed: page.url(), body: await page.textContent('body') }));
});

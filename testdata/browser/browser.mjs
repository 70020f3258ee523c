// What the browser tests share: reading their JSON input, and Debian's
// headless Chromium in a fresh profile (nothing carries over between runs).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// input reads the JSON object given on stdin.
export async function input() {
  let raw = '';
  for await (const chunk of process.stdin) raw += chunk;
  return JSON.parse(raw);
}

// withPage runs fn(page) in a fresh headless Chromium (options are
// playwright's launch options, such as javaScriptEnabled), then closes it.
export async function withPage(options, fn) {
  const profile = mkdtempSync(join(tmpdir(), 'merchantpay-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    // This machine's network is closed: no background connections.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 30_000,
    ...options,
  });
  try {
    const page = context.pages()[0] ?? await context.newPage();
    page.setDefaultTimeout(15_000);
    return await fn(page);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// Unit tests of format.js, run by `node --test` (dashboard_test.go runs
// them from go test). Not part of the bundle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amount, dayStart, utc } from './format.js';

test('amounts keep every digit the API sent, padded to the currency', () => {
  assert.equal(amount('1500.5', 'NGN'), '1500.50');
  assert.equal(amount('0', 'NGN'), '0.00');
  assert.equal(amount('-12', 'GHS'), '-12.00');
  assert.equal(amount('0.1', 'BTC'), '0.10000000');
  assert.equal(amount('0.000001', 'USDT'), '0.000001');
  // Beyond a float's precision: still exact.
  assert.equal(amount('9007199254740993.07', 'NGN'), '9007199254740993.07');
  // More decimals than the currency has: kept, never rounded.
  assert.equal(amount('1.005', 'NGN'), '1.005');
  assert.equal(amount('12.3', 'XYZ'), '12.3');
  assert.equal(amount(null, 'NGN'), '—');
});

test('UTC titles', () => {
  assert.equal(utc('2026-11-21T09:30:00.000Z'), '2026-11-21 09:30:00 UTC');
});

test('a local day starts at local midnight', () => {
  const start = new Date(dayStart('2026-03-01'));
  assert.equal(start.getDate(), 1);
  assert.equal(start.getHours(), 0);
  const next = new Date(dayStart('2026-02-28', 1));
  assert.equal(next.getMonth(), 2);
  assert.equal(next.getDate(), 1);
});

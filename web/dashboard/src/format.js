// Numbers and times as the dashboard shows them. Amounts arrive as
// decimal strings and stay strings: they are padded to the currency's
// decimals, never rounded and never turned into floats.

const decimals = { NGN: 2, GHS: 2, USD: 2, USDT: 6, USDC: 6, BTC: 8, ETH: 8 };

// amount pads a decimal string to the currency's number of decimals
// (an amount with more keeps them all).
export function amount(value, currency) {
  if (value === null || value === undefined || value === '') return '—';
  const want = decimals[currency];
  if (want === undefined) return String(value);
  const [whole, frac = ''] = String(value).split('.');
  const digits = frac.length >= want ? frac : frac.padEnd(want, '0');
  return digits ? `${whole}.${digits}` : whole;
}

const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

// utc writes an ISO time as "2026-11-21 09:30:00 UTC".
export function utc(iso) {
  return iso.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, ' UTC');
}

// localTime writes an ISO time in the browser's time zone.
export function localTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : local.format(d);
}

// dayStart is the ISO time at which a local calendar day (YYYY-MM-DD)
// begins, plus days whole days.
export function dayStart(date, days = 0) {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(y, m - 1, d + days).toISOString();
}

export const lower = (s) => (s ? String(s).toLowerCase() : s);

// A merchant's integration written against the client generated from
// /openapi.json: schema.d.ts is openapi-typescript's output beside this file,
// and every call goes through openapi-fetch. tsc checks the calls and the
// fields read against the generated types; then the flow runs against the
// service: wallet, then a dynamic account on it, then a sandbox bank
// transfer into it, then a withdrawal to a Nigerian bank.
// Usage: node flow.js BASE_URL SECRET_KEY; prints a JSON summary.
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

// Node's own types are not installed: only what the flow uses.
declare const process: { argv: string[] };

const [baseUrl, key] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl: `${baseUrl}/v1/merchant/public`, headers: { 'X-API-KEY': key } });

function check(what: string, cond: boolean, detail: unknown): void {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(detail)}`);
}

const wallet = await client.POST('/wallets', {
  body: {
    wallet_reference: 'ts-client-1',
    compliance: {
      phone: '+2348012345678', firstname: 'Chioma', lastname: 'Okafor', email: 'chioma@example.com',
      documents: [{ document_type: 'NIN', document_file: 'https://example.com/nin.png', document_file_type: 'url', document_no: '12345678901' }],
    },
  },
  params: { header: { 'Idempotency-Key': 'ts-wallet-1' } },
});
check('create wallet', wallet.response.status === 201 && wallet.data?.data.full_name === 'Chioma Okafor', wallet.error ?? wallet.data);
const walletRef = wallet.data!.data.wallet_reference;

const account = await client.POST('/wallets/{wallet_reference}', {
  params: { path: { wallet_reference: walletRef } },
  body: { account_type: 'dynamic', currency: 'NGN', amount: 25000.5, expires_at: 30, reject_amount_criteria: 'NOT_EQUAL' },
});
check('create account', account.response.status === 201 && account.data?.data.amount === 25000.5, account.error ?? account.data);
const accountNumber: string = account.data!.data.account_number;

const deposit = await client.POST('/sandbox/deposits/bank-transfer', {
  body: { account_number: accountNumber, amount: 25000.5, sender_name: 'Ada Obi' },
});
const dep = deposit.data?.data;
check('bank transfer', deposit.response.status === 200 && dep?.type === 'DEPOSIT' && dep.status === 'success' &&
  dep.amount === 25000.5 && dep.wallet_reference === walletRef, deposit.error ?? deposit.data);

const banks = await client.GET('/misc/banks', { params: { query: { country: 'NG' } } });
check('list banks', banks.response.status === 200 && (banks.data?.data.length ?? 0) > 0, banks.error ?? banks.data);
const first = banks.data!.data[0];
const bank = 'slug' in first ? first.code : '';

const withdrawal = await client.POST('/transactions/withdraw', {
  body: {
    amount: 1000, currency: 'NGN', reference: 'ts-payout-1', narration: 'Payout',
    beneficiary: { email: 'ada.obi@example.com', bank, account_name: 'Ada Obi', account_number: '0123456789' },
  },
});
const wd = withdrawal.data?.data;
check('withdraw', withdrawal.response.status === 200 && wd?.type === 'WITHDRAWAL' && wd.status === 'pending' &&
  wd.amount === 1000 && wd.merchant_reference === 'ts-payout-1', withdrawal.error ?? withdrawal.data);

const again = await client.GET('/transactions/{reference}', { params: { path: { reference: 'ts-payout-1' } } });
check('get transaction', again.response.status === 200 && again.data?.data.reference === wd!.reference, again.error ?? again.data);

const refused = await client.POST('/transactions/withdraw', {
  body: { amount: 1000, currency: 'NGN', beneficiary: { email: 'not-an-email', bank, account_name: 'Ada Obi', account_number: '0123456789' } },
});
check('a bad withdrawal is refused', refused.response.status === 400 && refused.error?.code === 'VALIDATION_ERROR' &&
  refused.error.errors.some((e) => e.field === 'beneficiary.email'), refused.error ?? refused.data);

console.log(JSON.stringify({
  wallet: walletRef, account: accountNumber, deposit: dep!.reference, withdrawal: wd!.reference,
  refused: refused.error!.code,
}));

// Sandbox (test mode): fund a balance, simulate an incoming bank
// transfer, open a pending crypto-pay checkout.
import { useState } from 'preact/hooks';
import { gql, idempotencyKey } from './api.js';
import { Field, Money, Note, Problem, useQuery } from './ui.jsx';

const fundMutation = `mutation Fund($input: FundBalanceInput!) { fundBalance(input: $input) { currency available pending } }`;
const transferMutation = `mutation Transfer($input: SimulateBankTransferInput!) {
  simulateBankTransfer(input: $input) { reference status amount currency }
}`;
const checkoutMutation = `mutation Checkout($input: StartDepositInput!) {
  startDeposit(input: $input) { links { checkoutUrl prepayId } transaction { reference status amount currency } }
}`;
const accountsQuery = `{ wallets(first: 50) { edges { node { accounts { accountNumber accountName } } } } }`;
const currencies = ['NGN', 'GHS', 'USD', 'USDT', 'USDC', 'BTC', 'ETH'];

// useAction runs a mutation from a form and keeps its outcome.
function useAction() {
  const [state, setState] = useState({ result: null, error: null, busy: false });
  const run = async (query, input) => {
    setState({ result: null, error: null, busy: true });
    try {
      const data = await gql(query, { input: { ...input, idempotencyKey: idempotencyKey() } });
      setState({ result: data, error: null, busy: false });
    } catch (error) {
      setState({ result: null, error, busy: false });
    }
  };
  return [state, run];
}

export function Sandbox() {
  return (
    <>
      <p>Test mode only: these create sandbox money and transactions, which show on the other pages and the live feed.</p>
      <Fund />
      <BankTransfer />
      <CryptoPayCheckout />
    </>
  );
}

function Fund() {
  const [currency, setCurrency] = useState('NGN');
  const [value, setValue] = useState('');
  const [state, run] = useAction();
  const b = state.result?.fundBalance;
  return (
    <form class="card" aria-labelledby="fund-h" onSubmit={(e) => (e.preventDefault(), run(fundMutation, { currency, amount: value.trim() }))}>
      <h2 id="fund-h">Fund a balance</h2>
      <Field id="fund-currency" label="Currency">
        <select id="fund-currency" value={currency} onChange={(e) => setCurrency(e.currentTarget.value)}>
          {currencies.map((c) => (
            <option value={c}>{c}</option>
          ))}
        </select>
      </Field>
      <Field id="fund-amount" label="Amount">
        <input id="fund-amount" inputMode="decimal" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
      </Field>
      <button type="submit" disabled={state.busy}>
        Fund balance
      </button>
      <Problem error={state.error} />
      {b && (
        <Note>
          {b.currency} available is now <Money value={b.available} currency={b.currency} showCurrency />.
        </Note>
      )}
    </form>
  );
}

function BankTransfer() {
  const accounts = useQuery(accountsQuery);
  const numbers = (accounts.data?.wallets.edges ?? []).flatMap((e) => e.node.accounts);
  const [form, setForm] = useState({ accountNumber: '', amount: '', narration: '', senderName: '' });
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const [state, run] = useAction();
  const t = state.result?.simulateBankTransfer;
  const submit = (e) => {
    e.preventDefault();
    const input = { accountNumber: form.accountNumber.trim(), amount: form.amount.trim() };
    if (form.narration.trim()) input.narration = form.narration.trim();
    if (form.senderName.trim()) input.senderName = form.senderName.trim();
    run(transferMutation, input);
  };
  return (
    <form class="card" aria-labelledby="transfer-h" onSubmit={submit}>
      <h2 id="transfer-h">Simulate a bank transfer</h2>
      <Field id="tr-account" label="Account number" hint="One of your virtual accounts (10 digits).">
        <input
          id="tr-account"
          inputMode="numeric"
          list="tr-accounts"
          value={form.accountNumber}
          onInput={set('accountNumber')}
          aria-describedby="tr-account-hint"
          required
        />
        <datalist id="tr-accounts">
          {numbers.map((a) => (
            <option value={a.accountNumber}>{a.accountName}</option>
          ))}
        </datalist>
      </Field>
      <Field id="tr-amount" label="Amount (NGN)">
        <input id="tr-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} required />
      </Field>
      <Field id="tr-narration" label="Narration">
        <input id="tr-narration" value={form.narration} onInput={set('narration')} />
      </Field>
      <Field id="tr-sender" label="Sender name">
        <input id="tr-sender" value={form.senderName} onInput={set('senderName')} />
      </Field>
      <button type="submit" disabled={state.busy}>
        Send transfer
      </button>
      <Problem error={state.error} />
      {t && (
        <Note>
          Deposit <a href={`#/transactions/${encodeURIComponent(t.reference)}`}>{t.reference}</a> of{' '}
          <Money value={t.amount} currency={t.currency} showCurrency /> is {t.status.toLowerCase()}.
        </Note>
      )}
    </form>
  );
}

function CryptoPayCheckout() {
  const [form, setForm] = useState({ productName: '', amount: '', currency: 'NGN' });
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const [state, run] = useAction();
  const d = state.result?.startDeposit;
  const submit = (e) => {
    e.preventDefault();
    run(checkoutMutation, {
      depositMethod: 'crypto-pay',
      requirement: { productName: form.productName.trim() },
      amount: form.amount.trim(),
      currency: form.currency,
    });
  };
  return (
    <form class="card" aria-labelledby="checkout-h" onSubmit={submit}>
      <h2 id="checkout-h">Open a crypto-pay checkout</h2>
      <p class="hint">
        Starts a pending crypto-pay deposit and gives the hosted checkout's address, where Pay and Cancel complete it. The
        service runs crypto-pay in live mode only, after enrolment: with a test key it answers that it works in live mode
        only.
      </p>
      <Field id="cp-product" label="Product name">
        <input id="cp-product" value={form.productName} onInput={set('productName')} required />
      </Field>
      <Field id="cp-amount" label="Amount">
        <input id="cp-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} required />
      </Field>
      <Field id="cp-currency" label="Currency">
        <select id="cp-currency" value={form.currency} onChange={set('currency')}>
          {['NGN', 'GHS'].map((c) => (
            <option value={c}>{c}</option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={state.busy}>
        Start checkout
      </button>
      <Problem error={state.error} />
      {d && (
        <Note>
          Deposit {d.transaction.reference} is {d.transaction.status.toLowerCase()}.{' '}
          <a href={d.links.checkoutUrl} target="_blank" rel="noopener">
            Open the checkout
          </a>
        </Note>
      )}
    </form>
  );
}

package checkout

// pageHTML is the one page: a checkout in any state, or a message. Styles
// are inline and there is no script, so the page needs nothing else.
const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
{{- if .Refresh}}
<meta http-equiv="refresh" content="{{.Refresh}}">
{{- end}}
<title>{{.Title}}</title>
<style>
  body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f3f4f6; color: #111827; }
  main { max-width: 26rem; margin: 2rem auto; background: #fff; border-radius: 12px; padding: 1.5rem 1.75rem; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
  .sandbox { display: inline-block; font-size: .75rem; letter-spacing: .05em; text-transform: uppercase; background: #fef3c7; color: #92400e; padding: .15rem .5rem; border-radius: 4px; margin: 0; }
  h1 { font-size: 1.3rem; margin: .75rem 0 .25rem; }
  h2 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
  .description { color: #4b5563; margin: 0 0 .5rem; white-space: pre-line; }
  .amount { font-size: 2rem; font-weight: 700; margin: .75rem 0 .25rem; }
  .note, .expiry { color: #4b5563; font-size: .9rem; margin: .25rem 0; }
  .qr { text-align: center; margin: 1rem 0; }
  .qr img { width: 200px; height: 200px; image-rendering: pixelated; }
  .actions { display: flex; gap: .75rem; margin-top: 1rem; }
  .actions form { flex: 1; margin: 0; }
  button { width: 100%; font-size: 1rem; padding: .75rem; border-radius: 8px; border: 1px solid #d1d5db; cursor: pointer; background: #fff; }
  button.pay { background: #2563eb; border-color: #2563eb; color: #fff; font-weight: 600; }
  .state { font-weight: 600; padding: .75rem; border-radius: 8px; margin-top: 1rem; }
  .state.paid { background: #dcfce7; color: #166534; }
  .state.ended { background: #fee2e2; color: #991b1b; }
  .ref { color: #6b7280; font-size: .8rem; margin-top: 1rem; word-break: break-all; }
</style>
</head>
<body>
<main>
<p class="sandbox">Sandbox checkout</p>
{{- with .C}}
<h1 id="business">{{.BusinessName}}</h1>
<h2 id="product">{{.ProductName}}</h2>
{{- if .ProductDescription}}
<p class="description" id="description">{{.ProductDescription}}</p>
{{- end}}
<p class="amount"><span id="amount">{{.Amount}}</span> <span id="currency">{{.Currency}}</span></p>
{{- if $.Cross}}
<p class="note">{{.BusinessName}} receives {{.Credited}} {{.CreditedCurrency}}.</p>
{{- end}}
{{- if eq .State "open"}}
<p class="expiry" id="time-left">Time left: {{$.Left}} (expires {{$.Expires}})</p>
<div class="qr"><img id="qr" src="{{$.QRSrc}}" alt="QR code of this checkout: scan it to pay from another device" width="200" height="200"></div>
<div class="actions">
  <form method="post" action="{{$.CancelAction}}"><button type="submit" id="cancel">Cancel</button></form>
  <form method="post" action="{{$.PayAction}}"><button type="submit" id="pay" class="pay">Pay {{.Amount}} {{.Currency}}</button></form>
</div>
{{- else if eq .State "paid"}}
<p class="state paid" id="state">Paid. Thank you: {{.BusinessName}} has received your payment.</p>
{{- else if eq .State "cancelled"}}
<p class="state ended" id="state">Cancelled. This checkout was cancelled and nothing was paid.</p>
{{- else if eq .State "expired"}}
<p class="state ended" id="state">Expired. This checkout expired at {{$.Expires}} and can no longer be paid.</p>
{{- else}}
<p class="state ended" id="state">Failed. This checkout ended without a payment.</p>
{{- end}}
<p class="ref">Checkout {{.PrepayID}}</p>
{{- else}}
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{- end}}
</main>
</body>
</html>
`

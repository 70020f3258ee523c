package mail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"strings"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/tenant"
	"merchantpay/present/jsonx"
)

// Notifies reports whether an event of type typ gets an e-mail: the
// outcomes (*.success, *.failed, *.refunded), not *.pending.
func Notifies(typ string) bool {
	return strings.HasSuffix(typ, ".success") || strings.HasSuffix(typ, ".failed") || strings.HasSuffix(typ, ".refunded")
}

var outcomeWords = map[string]string{"success": "succeeded", "failed": "failed", "refunded": "refunded"}

// txFields are the parts of the payload (the Transaction) the e-mail shows.
// Amounts stay json.Number so their digits are shown exactly.
type txFields struct {
	Reference         string       `json:"reference"`
	MerchantReference *string      `json:"merchant_reference"`
	Status            string       `json:"status"`
	Amount            json.Number  `json:"amount"`
	Currency          string       `json:"currency"`
	ToAmount          *json.Number `json:"to_amount"`
	ToCurrency        *string      `json:"to_currency"`
	Fee               json.Number  `json:"fee"`
	Narration         string       `json:"narration"`
	RejectReason      *string      `json:"reject_reason"`
}

// Compose writes the subject and plain-text body of ev's e-mail.
func Compose(ev *ent.Event, merchantName string) (subject, body string) {
	var tx txFields
	_ = json.Unmarshal(ev.Payload, &tx) // the payload is ours; a gap only leaves a line blank
	title := ev.Type
	if kind, outcome, ok := strings.Cut(ev.Type, "."); ok && kind != "" {
		title = strings.ToUpper(kind[:1]) + kind[1:] + " " + outcomeWords[outcome]
	}
	prefix := ""
	if ev.Mode == tenant.Test {
		prefix = "[test] "
	}
	subject = fmt.Sprintf("%s%s: %s %s (%s)", prefix, title, tx.Amount, tx.Currency, tx.Reference)

	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\n", oneLine(merchantName))
	fmt.Fprintf(&b, "%s.\n\n", title)
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-20s %s\n", label+":", oneLine(value))
		}
	}
	line("Event", ev.Type)
	line("Mode", ev.Mode)
	line("Reference", tx.Reference)
	if tx.MerchantReference != nil {
		line("Your reference", *tx.MerchantReference)
	}
	line("Status", tx.Status)
	line("Amount", strings.TrimSpace(tx.Amount.String()+" "+tx.Currency))
	if tx.ToAmount != nil && tx.ToCurrency != nil {
		line("Converted amount", tx.ToAmount.String()+" "+*tx.ToCurrency)
	}
	if tx.Fee != "" && tx.Fee != "0" {
		line("Fee", tx.Fee.String()+" "+tx.Currency)
	}
	line("Narration", tx.Narration)
	if tx.RejectReason != nil {
		line("Reason", *tx.RejectReason)
	}
	line("Time", jsonx.Time(ev.CreatedAt))
	line("Event id", ev.EventID)
	b.WriteString("\nThe same event was sent to your webhook endpoints, if any. ")
	b.WriteString("You receive this e-mail because this address is your merchant account's notification address.\n")
	return subject, b.String()
}

// oneLine keeps payload text from breaking the layout (or the headers).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Render builds the RFC 5322 message: UTF-8 text, quoted-printable, CRLF.
func Render(from, to, subject, body, messageID string, date time.Time) []byte {
	var m bytes.Buffer
	h := func(name, value string) { fmt.Fprintf(&m, "%s: %s\r\n", name, oneLine(value)) }
	h("From", from)
	h("To", to)
	h("Subject", mime.QEncoding.Encode("utf-8", oneLine(subject)))
	h("Date", date.Format(time.RFC1123Z))
	h("Message-ID", "<"+messageID+">")
	h("MIME-Version", "1.0")
	h("Content-Type", "text/plain; charset=UTF-8")
	h("Content-Transfer-Encoding", "quoted-printable")
	m.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&m)
	_, _ = qp.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n")))
	_ = qp.Close()
	m.WriteString("\r\n")
	return m.Bytes()
}

package rest

import (
	"bytes"
	"testing"

	"merchantpay/present/txview"
)

// renderOK writes a transaction's envelope itself; it must be byte for byte
// what encoding/json writes for okEnvelope.
func TestRenderOKAppender(t *testing.T) {
	v := txview.View(benchTransaction())
	for _, res := range []Result{
		{Message: "Transaction retrieved successfully", Data: v},
		{Status: 201, Message: `a "quoted" <message> ₦`, Data: v},
		{Message: "", Data: v},
	} {
		got := renderOK(res)
		want := encode(okEnvelope{Status: true, StatusCode: statusOf(res), Message: res.Message, Data: res.Data})
		if !bytes.Equal(got, want) {
			t.Errorf("differs:\n got %s\nwant %s", got, want)
		}
	}
}

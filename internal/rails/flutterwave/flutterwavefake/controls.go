package flutterwavefake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"merchantpay/internal/rails/railsfake"
)

// Failure is how the fake mishandles a coming call; its server errors
// answer 503 with Flutterwave's error envelope. TimeoutAfter and
// ServerErrorAfter create the transfer before failing.
type Failure = railsfake.Failure

// The failures FailNext takes.
const (
	None              = railsfake.None
	TimeoutBefore     = railsfake.TimeoutBefore
	TimeoutAfter      = railsfake.TimeoutAfter
	ServerErrorBefore = railsfake.ServerErrorBefore
	ServerErrorAfter  = railsfake.ServerErrorAfter
)

func serviceUnavailable(w http.ResponseWriter) {
	railsfake.WriteJSON(w, http.StatusServiceUnavailable, errorBody("Service temporarily unavailable"))
}

// Complete ends the transfer under reference with status SUCCESSFUL or
// FAILED (with message as complete_message).
func (f *Fake) Complete(reference, status, message string) error {
	if status != "SUCCESSFUL" && status != "FAILED" && status != "PENDING" {
		return fmt.Errorf("flutterwavefake: status %q is not PENDING, SUCCESSFUL or FAILED", status)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.byReference(reference)
	if t == nil {
		return fmt.Errorf("flutterwavefake: no transfer under reference %q", reference)
	}
	t.Status, t.CompleteMessage = status, message
	return nil
}

// Transfer returns a copy of the transfer under reference.
func (f *Fake) Transfer(reference string) (Transfer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.byReference(reference); t != nil {
		return *t, true
	}
	return Transfer{}, false
}

// Transfers returns copies of every transfer, oldest first.
func (f *Fake) Transfers() []Transfer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Transfer, 0, len(f.transfers))
	for _, t := range f.transfers {
		out = append(out, *t)
	}
	return out
}

// WebhookBody is the transfer.completed delivery for the transfer under
// reference, as Flutterwave v3 writes it.
func (f *Fake) WebhookBody(reference string) ([]byte, error) {
	f.mu.Lock()
	t := f.byReference(reference)
	var obj map[string]any
	if t != nil {
		obj = t.object()
		obj["fullname"] = t.BeneficiaryName
		delete(obj, "full_name")
	}
	f.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("flutterwavefake: no transfer under reference %q", reference)
	}
	return json.Marshal(map[string]any{"event": "transfer.completed", "event.type": "Transfer", "data": obj})
}

// SendWebhook posts transfer.completed for the transfer under reference to
// url with the verif-hash header, and returns the answer's status and body.
func (f *Fake) SendWebhook(ctx context.Context, url, reference string) (int, []byte, error) {
	body, err := f.WebhookBody(reference)
	if err != nil {
		return 0, nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("verif-hash", f.webhookHash)
	return railsfake.PostWebhook(ctx, url, h, body)
}

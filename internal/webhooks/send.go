package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/tracing"
	"merchantpay/present/jsonx"
)

// outcome is what one attempt saw.
type outcome struct {
	started time.Time
	latency time.Duration
	status  int // 0: no answer
	// err is what the merchant reads about a failed attempt: "HTTP 503",
	// or a class of hookwire.ClassifyFailure when no answer came.
	err  string
	body string
}

// succeeded reports a 2xx answer.
func (o outcome) succeeded() bool { return o.status >= 200 && o.status < 300 }

// newClient sends deliveries through dialer: no proxy (the SSRF check must
// see the real address), no redirects followed (a 3xx is a failed
// attempt). As many idle connections per host are kept as attempts may run
// at once: fewer, and a busy endpoint's connections are closed and dialled
// again all the time.
func newClient(dialer hookwire.Dialer, timeout time.Duration, concurrency int) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		DialTLSContext:        dialer.DialTLSContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, 2*concurrency),
		MaxIdleConnsPerHost:   concurrency,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// send POSTs the signed body of delivery dl once. A failure without an
// answer is recorded as its class only; the error itself, which may name
// internal addresses, name servers or ports, goes to the log.
func (d *Dispatcher) send(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, ev *ent.Event) outcome {
	out := outcome{started: d.clock.Now()}
	body := Body(ev)
	signer, err := hookwire.NewSigner(ep.Secret)
	if err != nil {
		out.err = "the endpoint secret is unusable"
		d.cfg.Log.Error("webhook attempt: unusable secret", "delivery", dl.ID, "endpoint", ep.ID, "err", err)
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		out.err = "the endpoint URL is unusable"
		d.cfg.Log.Warn("webhook attempt: unusable URL", "delivery", dl.ID, "endpoint", ep.ID, "err", err)
		return out
	}
	for k, v := range signer.Headers(ev.EventID, out.started, body) {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	start := time.Now()
	res, err := d.client.Do(req)
	if err != nil {
		out.latency = time.Since(start)
		out.err = hookwire.ClassifyFailure(err)
		d.cfg.Log.Info("webhook attempt got no answer", "delivery", dl.ID, "endpoint", ep.ID,
			"merchant", ep.MerchantID, "class", out.err, "err", err)
		return out
	}
	kept, _ := io.ReadAll(io.LimitReader(res.Body, ResponseKeep))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, drainLimit))
	res.Body.Close()
	out.latency = time.Since(start)
	out.status = res.StatusCode
	out.body = clean(string(kept))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode >= 300 && res.StatusCode < 400:
		out.err = fmt.Sprintf("HTTP %d: redirects are not followed", res.StatusCode)
	default:
		out.err = fmt.Sprintf("HTTP %d", res.StatusCode)
	}
	return out
}

// tracedSend is send in a span of its own (when the dispatcher traces),
// linked to the request whose event it delivers. The span is the
// service's: the request to the merchant carries no trace context.
func (d *Dispatcher) tracedSend(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, ev *ent.Event) outcome {
	if d.cfg.Tracer == nil {
		return d.send(ctx, dl, ep, ev)
	}
	parent := ""
	if ev.TraceParent != nil {
		parent = *ev.TraceParent
	}
	opts := append(tracing.Link(parent), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("webhook.delivery_id", dl.ID), attribute.String("webhook.event_type", ev.Type)))
	ctx, span := d.cfg.Tracer.Start(ctx, "webhook delivery", opts...)
	defer span.End()
	out := d.send(ctx, dl, ep, ev)
	if out.status > 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", out.status))
	}
	if !out.succeeded() {
		span.SetStatus(codes.Error, out.err)
	}
	return out
}

// Body is the webhook body of ev: {"id","event","created_at","data"}, data
// being the stored payload byte for byte.
func Body(ev *ent.Event) []byte {
	str := func(s string) []byte { b, _ := json.Marshal(s); return b }
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(str(ev.EventID))
	b.WriteString(`,"event":`)
	b.Write(str(ev.Type))
	b.WriteString(`,"created_at":`)
	b.Write(str(jsonx.Time(ev.CreatedAt)))
	b.WriteString(`,"data":`)
	b.Write(ev.Payload)
	b.WriteString(`}`)
	return b.Bytes()
}

// attempt makes one attempt of a claimed delivery and hands its outcome to
// the recorders, without waiting for it to be recorded; finish runs once
// the delivery is done with (recorded, abandoned or left to its lease).
// An attempt the claim found interrupted is recorded first, and a real
// attempt follows it at once.
func (d *Dispatcher) attempt(ctx context.Context, a claimedDelivery, records chan<- recordReq, finish func()) {
	dl, ep, ev := a.dl, a.ep, a.ev
	if ev == nil && dl.EventType == PingEvent {
		ev = pingEvent(dl)
	}
	recorded := false
	defer func() {
		if !recorded {
			finish()
		}
	}()
	if a.interrupted != nil {
		held, err := d.recordInterrupted(ctx, dl, *a.interrupted)
		if err != nil {
			// The mark stays: the lease runs out and the next claim
			// records the interrupted attempt.
			d.cfg.Log.Error("webhook delivery: recording an interrupted attempt failed", "delivery", dl.ID, "err", err)
			return
		}
		if !held {
			return // another instance holds it now
		}
	}
	switch {
	case ep == nil || ep.DeletedAt != nil:
		d.abandon(ctx, dl, "the endpoint was deleted")
		return
	case !ep.Enabled:
		d.abandon(ctx, dl, "the endpoint is disabled")
		return
	case ev == nil:
		d.cfg.Log.Warn("webhook delivery: its event was not found", "delivery", dl.ID, "event", dl.EventID)
		recorded = true
		records <- leave(dl, d.unmarkDone(dl, finish))
		return // the lease runs out and the attempt is made again
	case dl.LeaseUntil != nil && d.clock.Now().Add(d.cfg.Timeout).After(*dl.LeaseUntil):
		// It waited too long in the queue: the attempt could outlast the
		// lease and run beside another instance's. The lease runs out and
		// the attempt is made then.
		recorded = true
		records <- leave(dl, d.unmarkDone(dl, finish))
		return
	}
	out := d.tracedSend(ctx, dl, ep, ev)
	if d.cfg.Observe != nil {
		failure := ""
		if out.status == 0 {
			failure = out.err
		}
		d.cfg.Observe(out.status, failure, out.latency)
	}
	recorded = true
	records <- recordReq{dl: dl, ep: ep, out: out, done: func(err error) {
		if err != nil {
			d.cfg.Log.Error("webhook delivery: recording attempt failed", "delivery", dl.ID, "err", err)
		}
		finish()
	}}
}

// clean makes text storable in a text column (valid UTF-8, no NUL).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

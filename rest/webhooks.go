package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/webhooks"
)

// Webhook endpoints over REST, our addition to the published API: list,
// create, delete, and roll an endpoint's secret.

type webhookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"created_at"`
}

type webhookCreatedJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	Secret    string   `json:"secret"`
	CreatedAt string   `json:"created_at"`
}

func webhookEvents(ep *ent.WebhookEndpoint) []string {
	if ep.Events == nil {
		return []string{}
	}
	return ep.Events
}

func webhookView(ep *ent.WebhookEndpoint) webhookJSON {
	return webhookJSON{ID: ep.ID, URL: ep.URL, Events: webhookEvents(ep), Enabled: ep.Enabled, CreatedAt: Time(ep.CreatedAt)}
}

// decodeWebhook reads {url, events?}. A non-string event keeps its place
// (as a name no endpoint accepts) so events[i] stays the caller's index.
func decodeWebhook(o object) webhooks.CreateInput {
	in := webhooks.CreateInput{URL: o.str("url", true)}
	raw, ok := o.arr("events", false)
	if !ok {
		return in
	}
	in.Events = make([]string, len(raw))
	for i, v := range raw {
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &in.Events[i]) != nil {
			o.f.Add(fmt.Sprintf("%s[%d]", o.name("events"), i), "must be a string")
			in.Events[i] = ""
		}
	}
	return in
}

func (o *Ops) createWebhook(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	in := decodeWebhook(body)
	if err := mergeValidation(&f, func(g *apperr.Fields) { webhooks.Validate(in, g) }); err != nil {
		return Result{}, err
	}
	ep, err := o.Webhooks.Create(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: http.StatusCreated, Message: "Webhook endpoint created successfully", Data: webhookCreatedJSON{
		ID: ep.ID, URL: ep.URL, Events: webhookEvents(ep), Enabled: ep.Enabled, Secret: ep.Secret, CreatedAt: Time(ep.CreatedAt),
	}}, nil
}

func (o *Ops) listWebhooks(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	p := pageParams(r, webhooks.CursorID, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	rows, info, err := o.Webhooks.List(ctx, p)
	if err != nil {
		return Result{}, err
	}
	out := make([]webhookJSON, len(rows))
	for i, ep := range rows {
		out[i] = webhookView(ep)
	}
	return Result{Message: "Webhook endpoints retrieved successfully", Data: out, Meta: &Meta{HasMore: info.HasMore, NextCursor: info.NextCursor}}, nil
}

func (o *Ops) deleteWebhook(ctx context.Context, r *Request) (Result, error) {
	id := r.Param("id")
	if err := o.Webhooks.Delete(ctx, r.Tx, id); err != nil {
		return Result{}, err
	}
	return Result{Message: "Webhook endpoint deleted successfully", Data: struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true}}, nil
}

// rollWebhookSecret takes no body (one sent is ignored).
func (o *Ops) rollWebhookSecret(ctx context.Context, r *Request) (Result, error) {
	ep, err := o.Webhooks.RollSecret(ctx, r.Tx, r.Param("id"))
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Webhook secret rolled successfully", Data: struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}{ep.ID, ep.Secret}}, nil
}

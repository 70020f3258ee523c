// Package obs carries the request id and a request-scoped logger.
package obs

import (
	"context"
	"log/slog"
	"sync"
)

type ridKey struct{}
type logKey struct{}

// WithRequestID returns ctx carrying id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ridKey{}, id)
}

// RequestID is the id of the request in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ridKey{}).(string)
	return id
}

// scope is the logger of a context: a base logger and the attributes every
// line logged under the context carries. The logger with them is built on
// first use, as slog's With formats the attributes at once: most requests
// log nothing but their access-log line, which the server writes itself.
type scope struct {
	base *slog.Logger
	args []any
	once sync.Once
	log  *slog.Logger
}

func (s *scope) logger() *slog.Logger {
	if len(s.args) == 0 {
		return s.base
	}
	s.once.Do(func() { s.log = s.base.With(s.args...) })
	return s.log
}

// WithLogger returns ctx carrying l.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, logKey{}, &scope{base: l})
}

// With returns ctx whose logger adds args (slog key-value pairs) to every
// line, after those ctx's logger adds.
func With(ctx context.Context, args ...any) context.Context {
	parent, _ := ctx.Value(logKey{}).(*scope)
	s := &scope{base: slog.Default()}
	if parent != nil {
		s.base = parent.base
		s.args = append(make([]any, 0, len(parent.args)+len(args)), parent.args...)
	}
	s.args = append(s.args, args...)
	return context.WithValue(ctx, logKey{}, s)
}

// Log is the logger of ctx (slog's default when none).
func Log(ctx context.Context) *slog.Logger {
	if s, ok := ctx.Value(logKey{}).(*scope); ok {
		return s.logger()
	}
	return slog.Default()
}

// Abandoned reports whether the request whose context is ctx was abandoned
// by its client: net/http cancels a request's context when its client
// closes the connection, without a cause of its own, whereas a deadline
// (the handler's timeout) ends it with DeadlineExceeded and the server,
// when it cuts requests short on shutdown, with a cause that says so. What
// goes wrong in such a request afterwards (statements cancelled, a
// transaction already rolled back) is the cancellation's doing, not a
// fault of the service, and is logged as such.
func Abandoned(ctx context.Context) bool {
	return ctx.Err() == context.Canceled && context.Cause(ctx) == context.Canceled
}

// FailureLevel is the level of a line reporting a request's failure:
// ERROR, or DEBUG when its client abandoned it (the access log counts it
// then, once).
func FailureLevel(ctx context.Context) slog.Level {
	if Abandoned(ctx) {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// Package server wires the service: configuration, database, HTTP mux and
// middleware, GraphQL transport, workers' lifecycle and the CLI.
package server

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"merchantpay/internal/hookwire"
	"merchantpay/internal/mail"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tracing"
)

// Config is read from environment variables; README.md's configuration table
// lists each with its default.
type Config struct {
	ListenAddr           string
	DatabaseURL          string
	PublicBaseURL        string
	Rails                string
	SandboxPayoutDelay   time.Duration
	WebhookRetrySchedule string
	SMTPURL              string
	RateLimit            int
	RateBurst            int
	LogLevel             slog.Level
	QuoteTTL             time.Duration
	IndicativeRefresh    time.Duration
	SwapSettlementDelay  time.Duration
	WebhookAllowPrivate  bool
	// AllowedOrigins for WebSocket upgrades; empty allows any origin (keys,
	// not cookies, authenticate, so a cross-site page gains nothing).
	AllowedOrigins []string
	// PairsConfig is the path of the pairs file (PAIRS_CONFIG); empty means
	// the embedded default.
	PairsConfig string
	// PayoutFees is the path of the payout fee table (PAYOUT_FEES); empty
	// means the embedded default (see internal/withdrawals/fees.json).
	PayoutFees string
	// PriceSource is static or sandbox (PRICE_SOURCE; sandbox with the
	// sandbox rails, else static).
	PriceSource string
	// EventsPollInterval is how often the webhook dispatcher, the mailer and
	// the subscription broker look for work without a wake-up
	// (EVENTS_POLL_INTERVAL, default 1s; tests shorten it).
	EventsPollInterval time.Duration
	// JobsPollInterval is how often the workers of background work on
	// transactions (swap settlement, payouts) look for due jobs (JOBS_POLL_INTERVAL,
	// default 1s; tests shorten it).
	JobsPollInterval time.Duration
	// WSMaxSubscriptions bounds the operations one WebSocket connection
	// runs at once (WS_MAX_SUBSCRIPTIONS, default 100), WSMaxSocketsPerKey
	// the WebSocket connections one API key holds open on an instance
	// (WS_MAX_SOCKETS_PER_KEY, default 500); 0 lifts either bound.
	WSMaxSubscriptions int
	WSMaxSocketsPerKey int
	// GraphQL limits: the cost an operation may have (GRAPHQL_MAX_COST,
	// default 2000 points), the time it may run (GRAPHQL_TIMEOUT, default
	// 2s; for a subscription, each event's resolution) and the size of its
	// answer (GRAPHQL_MAX_RESPONSE_BYTES, default 4 MiB).
	GraphQLMaxCost          int
	GraphQLTimeout          time.Duration
	GraphQLMaxResponseBytes int
	// ShutdownTimeout bounds the drain on SIGTERM.
	ShutdownTimeout time.Duration
	// Database sizes the PostgreSQL pool (DATABASE_MAX_CONNS) and bounds
	// statements (DATABASE_STATEMENT_TIMEOUT); SQLite ignores both.
	Database store.Options
	// AdminAddr is the operators' listener (ADMIN_ADDR, default
	// 127.0.0.1:9090; set and empty turns it off): /metrics, /debug/pprof/
	// and the health routes.
	AdminAddr string
	// LedgerCheckInterval is how often the ledger's invariants are checked
	// (LEDGER_CHECK_INTERVAL, default 1h; 0 turns the check off).
	LedgerCheckInterval time.Duration
	// Tracing is what the standard OTEL_* variables ask for.
	Tracing tracing.Config
	// HTTP are the deadlines of every phase of a request (HTTP_*).
	HTTP HTTPDeadlines
	// NoMigrate (MIGRATE=false) leaves the schema to `migrate up`: start-up
	// refuses a database with pending migrations instead of applying them.
	NoMigrate bool
	// LiveRails is what live mode runs on (LIVE_RAILS, the providers'
	// settings, RAILS_TIMEOUT, RAILS_RECONCILE_AFTER).
	LiveRails RailsConfig
}

// LoadConfig reads the environment, naming every bad variable at once.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		ListenAddr:           or(getenv("LISTEN_ADDR"), ":8080"),
		DatabaseURL:          or(getenv("DATABASE_URL"), "sqlite:./data/service.db"),
		PublicBaseURL:        strings.TrimRight(getenv("PUBLIC_BASE_URL"), "/"),
		Rails:                or(getenv("RAILS"), "sandbox"),
		WebhookRetrySchedule: or(getenv("WEBHOOK_RETRY_SCHEDULE"), "5s,5m,30m,2h,5h,10h,10h"),
		SMTPURL:              getenv("SMTP_URL"),
		ShutdownTimeout:      20 * time.Second,
	}
	var bad []string
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad = append(bad, fmt.Sprintf("%s=%q is not a positive Go duration (e.g. 90s)", name, v))
			return def
		}
		return d
	}
	c.SandboxPayoutDelay = dur("SANDBOX_PAYOUT_DELAY", 3*time.Second)
	c.QuoteTTL = dur("QUOTE_TTL", 90*time.Second)
	c.IndicativeRefresh = dur("INDICATIVE_REFRESH", 20*time.Second)
	c.SwapSettlementDelay = dur("SWAP_SETTLEMENT_DELAY", 30*time.Minute)
	c.JobsPollInterval = dur("JOBS_POLL_INTERVAL", time.Second)
	c.EventsPollInterval = dur("EVENTS_POLL_INTERVAL", time.Second)
	c.HTTP = HTTPDeadlines{
		ReadHeader:  dur("HTTP_READ_HEADER_TIMEOUT", 10*time.Second),
		Body:        dur("HTTP_BODY_TIMEOUT", 30*time.Second),
		BodyMinRate: 1024,
		Handler:     dur("HTTP_HANDLER_TIMEOUT", 30*time.Second),
		Write:       dur("HTTP_WRITE_TIMEOUT", 30*time.Second),
		Idle:        dur("HTTP_IDLE_TIMEOUT", 2*time.Minute),
	}
	if v := getenv("HTTP_BODY_MIN_RATE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad = append(bad, fmt.Sprintf("HTTP_BODY_MIN_RATE=%q is not a whole number of bytes per second (0 turns it off)", v))
		} else {
			c.HTTP.BodyMinRate = n
		}
	}
	if _, err := hookwire.ParseSchedule(c.WebhookRetrySchedule); err != nil {
		bad = append(bad, fmt.Sprintf("WEBHOOK_RETRY_SCHEDULE: %v", err))
	}
	if c.SMTPURL != "" {
		if _, err := mail.ParseURL(c.SMTPURL); err != nil {
			bad = append(bad, err.Error())
		}
	}
	c.Database, bad = loadDatabaseOptions(getenv, bad)
	c.LiveRails, bad = loadRailsConfig(getenv, bad)
	c.LiveRails.Timeout = dur("RAILS_TIMEOUT", 30*time.Second)
	c.LiveRails.ReconcileAfter = dur("RAILS_RECONCILE_AFTER", 10*time.Minute)
	c.AdminAddr = or(getenv("ADMIN_ADDR"), "127.0.0.1:9090")
	if c.AdminAddr == "off" {
		c.AdminAddr = ""
	}
	if v := getenv("LEDGER_CHECK_INTERVAL"); v == "0" {
		c.LedgerCheckInterval = 0
	} else {
		c.LedgerCheckInterval = dur("LEDGER_CHECK_INTERVAL", time.Hour)
	}
	if tc, err := tracing.ConfigFrom(getenv); err != nil {
		bad = append(bad, err.Error())
	} else {
		c.Tracing = tc
	}
	c.RateLimit, c.RateBurst = 100, 200
	if v := getenv("RATE_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad = append(bad, fmt.Sprintf("RATE_LIMIT=%q is not a whole number of requests per second (0 turns it off)", v))
		} else {
			c.RateLimit, c.RateBurst = n, 2*n
		}
	}
	if v := getenv("RATE_LIMIT_BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			bad = append(bad, fmt.Sprintf("RATE_LIMIT_BURST=%q is not a positive whole number", v))
		} else {
			c.RateBurst = n
		}
	}
	c.GraphQLTimeout = dur("GRAPHQL_TIMEOUT", 2*time.Second)
	// whole reads a whole number of at least min; 0 lifts the WebSocket
	// bounds, the GraphQL limits must be positive.
	whole := func(name string, def, min int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			if min == 0 {
				bad = append(bad, fmt.Sprintf("%s=%q is not a whole number (0 lifts the bound)", name, v))
			} else {
				bad = append(bad, fmt.Sprintf("%s=%q is not a positive whole number", name, v))
			}
			return def
		}
		return n
	}
	c.WSMaxSubscriptions = whole("WS_MAX_SUBSCRIPTIONS", 100, 0)
	c.WSMaxSocketsPerKey = whole("WS_MAX_SOCKETS_PER_KEY", 500, 0)
	c.GraphQLMaxCost = whole("GRAPHQL_MAX_COST", 2000, 1)
	c.GraphQLMaxResponseBytes = whole("GRAPHQL_MAX_RESPONSE_BYTES", 4<<20, 1)
	switch strings.ToLower(getenv("LOG_LEVEL")) {
	case "", "info":
		c.LogLevel = slog.LevelInfo
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		bad = append(bad, fmt.Sprintf("LOG_LEVEL=%q is not debug, info, warn or error", getenv("LOG_LEVEL")))
	}
	if v := getenv("WEBHOOK_ALLOW_PRIVATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad = append(bad, fmt.Sprintf("WEBHOOK_ALLOW_PRIVATE=%q is not true or false", v))
		}
		c.WebhookAllowPrivate = b
	}
	if v := getenv("MIGRATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad = append(bad, fmt.Sprintf("MIGRATE=%q is not true or false", v))
		}
		c.NoMigrate = err == nil && !b
	}
	c.PairsConfig = getenv("PAIRS_CONFIG")
	c.PayoutFees = getenv("PAYOUT_FEES")
	switch c.PriceSource = getenv("PRICE_SOURCE"); c.PriceSource {
	case "":
		c.PriceSource = "static"
		if c.Rails == "sandbox" {
			c.PriceSource = "sandbox"
		}
	case "static", "sandbox":
	default:
		bad = append(bad, fmt.Sprintf("PRICE_SOURCE=%q is not static or sandbox", c.PriceSource))
	}
	if c.Rails != "sandbox" {
		bad = append(bad, fmt.Sprintf("RAILS=%q: only the sandbox rails are built in", c.Rails))
	}
	if v := getenv("WS_ALLOWED_ORIGINS"); v != "" {
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				c.AllowedOrigins = append(c.AllowedOrigins, o)
			}
		}
	}
	if c.PublicBaseURL == "" {
		host := c.ListenAddr
		if strings.HasPrefix(host, ":") {
			host = "localhost" + host
		}
		c.PublicBaseURL = "http://" + host
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(bad, "; "))
	}
	return c, nil
}

// loadDatabaseOptions reads DATABASE_MAX_CONNS and
// DATABASE_STATEMENT_TIMEOUT, adding what is wrong with them to bad.
func loadDatabaseOptions(getenv func(string) string, bad []string) (store.Options, []string) {
	var o store.Options
	if v := getenv("DATABASE_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			bad = append(bad, fmt.Sprintf("DATABASE_MAX_CONNS=%q is not a positive whole number of connections", v))
		} else {
			o.MaxConns = n
		}
	}
	if v := getenv("DATABASE_STATEMENT_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < time.Millisecond) {
			bad = append(bad, fmt.Sprintf("DATABASE_STATEMENT_TIMEOUT=%q is not 0 (no limit) or a Go duration of at least 1ms (e.g. 30s)", v))
		} else {
			o.StatementTimeout = d
		}
	}
	return o, bad
}

// Simulations says in which modes the sandbox's simulations exist: the
// modes whose money moves on the sandbox, so test mode always and live
// mode while LIVE_RAILS names no provider.
func (c Config) Simulations() rails.Simulations {
	if len(c.LiveRails.Live) == 0 {
		return rails.SimulationsInEveryMode
	}
	return func(mode string) bool { return mode != rails.ModeLive }
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// EnvConfig reads the process environment.
func EnvConfig() (Config, error) {
	c, err := LoadConfig(os.Getenv)
	// ADMIN_ADDR set and empty turns the admin listener off, which getenv
	// cannot tell from unset.
	if v, ok := os.LookupEnv("ADMIN_ADDR"); ok && v == "" {
		c.AdminAddr = ""
	}
	return c, err
}

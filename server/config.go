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

	"merchantpay/internal/mail"
	"merchantpay/internal/webhook"
)

// Config is read from environment variables (CONTRACT 11).
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
	// ShutdownTimeout bounds the drain on SIGTERM.
	ShutdownTimeout time.Duration
	// NoMigrate (MIGRATE=false) leaves the schema to `migrate up`: start-up
	// refuses a database with pending migrations instead of applying them.
	NoMigrate bool
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
	if _, err := webhook.ParseSchedule(c.WebhookRetrySchedule); err != nil {
		bad = append(bad, fmt.Sprintf("WEBHOOK_RETRY_SCHEDULE: %v", err))
	}
	if c.SMTPURL != "" {
		if _, err := mail.ParseURL(c.SMTPURL); err != nil {
			bad = append(bad, err.Error())
		}
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

// Sandbox reports whether the built-in sandbox rails run.
func (c Config) Sandbox() bool { return c.Rails == "sandbox" }

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// EnvConfig reads the process environment.
func EnvConfig() (Config, error) { return LoadConfig(os.Getenv) }

package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"merchantpay/internal/accounts"
	"merchantpay/internal/banks"
	"merchantpay/internal/broker"
	"merchantpay/internal/clock"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/deposits"
	"merchantpay/internal/events"
	"merchantpay/internal/exports"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/idem"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/mail"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/ops"
	"merchantpay/internal/railnotices"
	"merchantpay/internal/rails"
	"merchantpay/internal/ratelimit"
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/swaps"
	"merchantpay/internal/tracing"
	"merchantpay/internal/transactions"
	"merchantpay/internal/wallets"
	"merchantpay/internal/webhooks"
	"merchantpay/internal/withdrawals"
	"merchantpay/pipeline"
	"merchantpay/rest"
	"merchantpay/server/gqlws"
)

// App is one running instance of the service.
type App struct {
	Config Config
	DB     *store.DB
	Clock  clock.Clock
	Log    *slog.Logger

	Merchants *merchants.Service
	Wallets   *wallets.Service
	Idem      *idem.Store
	// Ledger holds every balance; all money moves through its postings.
	Ledger *ledger.Service
	// Transactions reads deposits, withdrawals and swaps.
	Transactions *transactions.Service
	Exports      *exports.Service
	// Outbox records events in the same transaction as their state change.
	Outbox *events.Outbox
	// Signal wakes the event workers after outbox commits, here and (on
	// PostgreSQL) on other instances.
	Signal *broker.Signal
	// Webhooks manages endpoints and reads and redelivers deliveries.
	Webhooks *webhooks.Service
	// Dispatcher fans events out to webhook deliveries and e-mails and sends them.
	Dispatcher *webhooks.Dispatcher
	// Mailer sends the notification e-mails.
	Mailer *mail.Mailer
	// Broker streams events to GraphQL subscriptions.
	Broker *broker.Broker
	// WebSockets serves GraphQL over WebSocket; Shutdown closes its
	// connections, which the HTTP server's shutdown does not track.
	WebSockets *gqlws.Server

	// Banks is the bank directory, loaded once at start-up.
	Banks *banks.Directory
	// Rails are the sandbox bank rails (RAILS), test mode's always.
	Rails rails.Rails
	// Router picks each mode's rails: the sandbox for test mode, the
	// providers LIVE_RAILS names (else the sandbox) for live mode.
	Router *rails.Router
	// Accounts issues fiat accounts and finds them for deposits.
	Accounts *accounts.Service
	// NameEnquiry resolves Nigerian bank accounts through the rails.
	NameEnquiry *rails.NameEnquiry
	// Rates serves indicative rates and quotes; swaps, withdrawals and
	// deposits call its Consume.
	Rates *rates.Service
	// Deposits books incoming bank transfers into fiat accounts.
	Deposits *deposits.Service
	// Swaps converts between a merchant's balances with swap quotes and
	// settles them (worker swap-settlement).
	Swaps *swaps.Service
	// Withdrawals accepts payouts to banks; its payout worker (worker
	// payouts) carries them through the rails.
	Withdrawals *withdrawals.Service
	// CryptoPay runs crypto-pay enrolment, deposits and their hosted
	// checkout; its worker crypto-pay-expiry fails checkouts at expiry.
	CryptoPay *cryptopay.Service

	// Metrics are what the admin listener's /metrics serves.
	Metrics *metrics.Metrics
	// Tracing exports spans when an OTLP endpoint is configured.
	Tracing *tracing.Tracing

	// RailNotices receives live providers' webhooks.
	RailNotices *railnotices.Service

	handler http.Handler
	workers []Worker
}

// Worker is background work run for the life of the instance.
type Worker struct {
	Name string
	Run  func(ctx context.Context)
}

// Options change how an App is built (tests pass a fake clock).
type Options struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// WebhookResolver looks webhook receivers' host names up, when endpoints
	// are saved and when deliveries connect (nil: the system's resolver).
	WebhookResolver *net.Resolver
	// WebhookLookupTimeout bounds the look-up when an endpoint is saved
	// (zero: hookwire.DefaultLookupTimeout); tests shorten it.
	WebhookLookupTimeout time.Duration
	// Simulations, when set, replaces the configuration's choice of modes
	// with sandbox simulations (tests turn them off).
	Simulations rails.Simulations
	// LiveRails, when set, are the providers live mode runs on instead of
	// those LIVE_RAILS names (tests pass fakes).
	LiveRails *rails.Live
}

// New opens and migrates the database (unless MIGRATE=false, when it only
// checks that nothing is pending) and wires every service.
func New(ctx context.Context, cfg Config, opt Options) (*App, error) {
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Simulations == nil {
		opt.Simulations = cfg.Simulations()
		if opt.LiveRails != nil {
			// Providers given by a test: live money moves on them.
			opt.Simulations = (&rails.Router{Live: opt.LiveRails}).Simulations()
		}
	}
	db, err := store.OpenWith(ctx, cfg.DatabaseURL, cfg.Database)
	if err != nil {
		return nil, err
	}
	built := false
	defer func() {
		if !built {
			db.Close()
		}
	}()
	if err := prepareSchema(ctx, db, cfg, opt.Logger); err != nil {
		return nil, err
	}
	a := &App{Config: cfg, DB: db, Clock: opt.Clock, Log: opt.Logger, Metrics: metrics.New()}
	if a.Tracing, err = tracing.Setup(ctx, cfg.Tracing, a.Log); err != nil {
		return nil, err
	}
	db.SetTracer(a.Tracing.Tracer())
	a.Merchants = merchants.New(db, a.Clock)
	a.Wallets = wallets.New(db, a.Clock)
	a.Idem = idem.New(db, a.Clock)
	a.Ledger = ledger.New(db, a.Clock, opt.Simulations)
	if err := a.Ledger.Setup(ctx); err != nil {
		return nil, err
	}
	a.Transactions = transactions.New(db)
	a.Exports = exports.New(db, a.Clock, a.Transactions)
	a.Outbox = events.New(db, a.Clock)
	if err := a.setupEvents(hookwire.Lookup{Resolver: opt.WebhookResolver, Timeout: opt.WebhookLookupTimeout}); err != nil {
		return nil, err
	}
	if a.Banks, err = banks.Load(); err != nil {
		return nil, err
	}
	if a.Rails, err = newRails(cfg, a.Banks, a.Clock); err != nil {
		return nil, err
	}
	if a.Router, err = newRouter(cfg, a.Rails, a.Banks, a.Clock, opt.LiveRails); err != nil {
		return nil, err
	}
	a.Accounts = accounts.New(db, a.Clock, a.Rails, a.Wallets)
	a.Accounts.IssueLiveWith(a.Router)
	a.NameEnquiry = rails.NewRoutedNameEnquiry(a.Banks, a.Router)
	// No deposit fee by default; deposits.Config is where an operator setting
	// would go.
	if a.Deposits, err = deposits.New(db, a.Clock, a.Ledger, a.Accounts, a.Outbox, deposits.Config{Simulations: opt.Simulations}); err != nil {
		return nil, err
	}
	if a.Rates, err = newRates(ctx, a); err != nil {
		return nil, err
	}
	a.Swaps = swaps.New(db, a.Clock, a.Rates, a.Ledger, a.Outbox, swaps.Config{SettlementDelay: cfg.SwapSettlementDelay, Tracer: a.workerTracer()})
	payoutFees, err := withdrawals.LoadFees(cfg.PayoutFees)
	if err != nil {
		return nil, err
	}
	a.Withdrawals = withdrawals.New(db, a.Clock, a.Ledger, a.Rates, a.Banks, a.Outbox, payoutFees, a.Router)
	// No crypto-pay fee by default; cryptopay.Config.Fee is where an
	// operator setting would go.
	if a.CryptoPay, err = cryptopay.New(db, a.Clock, a.Ledger, a.Rates, a.Outbox,
		cryptopay.Config{PublicBaseURL: cfg.PublicBaseURL, Simulations: opt.Simulations}); err != nil {
		return nil, err
	}
	a.CryptoPay.OrdersWith(a.Router)
	a.CryptoPay.Looked = func(provider, status string) { a.Metrics.Rails().Reconciled(provider, "order", status) }

	var limiter pipeline.Limiter
	var rl *ratelimit.Limiter
	if cfg.RateLimit > 0 {
		rl = ratelimit.New(cfg.RateLimit, cfg.RateBurst, time.Now)
		limiter = rl
	}
	a.setupMetrics(rl)
	pipe := pipeline.New(a.Merchants, limiter, a.Idem)
	svc := ops.Services{Merchants: a.Merchants, Wallets: a.Wallets, Ledger: a.Ledger, Transactions: a.Transactions,
		Accounts: a.Accounts, Banks: a.Banks, NameEnquiry: a.NameEnquiry, Rates: a.Rates, Swaps: a.Swaps,
		Deposits: a.Deposits, Webhooks: a.Webhooks, Withdrawals: a.Withdrawals, CryptoPay: a.CryptoPay,
		Outbox: a.Outbox, Broker: a.Broker, Exports: a.Exports, Clock: a.Clock, Simulations: opt.Simulations, Rails: a.Router}
	api := rest.New(rest.Deps{Pipeline: pipe, Services: svc})
	gql := newGraphQL(a, svc, pipe)
	a.RailNotices = &railnotices.Service{DB: db, Clock: a.Clock, Router: a.Router, Withdrawals: a.Withdrawals,
		Deposits: a.Deposits, CryptoPay: a.CryptoPay, Log: a.Log, Metrics: a.Metrics.Rails(), Fail: rest.WriteError,
		Owner: jobs.Owner()}
	a.handler = a.routes(api, gql)
	a.workers = append(a.workers, Worker{Name: "idempotency-purge", Run: a.purgeIdempotency})
	a.workers = append(a.workers, Worker{Name: "key-usage", Run: func(ctx context.Context) {
		a.Merchants.RunUsageFlusher(ctx, merchants.UsageFlushInterval, func(err error) {
			a.Log.Warn("API keys' last use not written", "err", err)
		})
	}})
	swapOwner := jobs.Owner()
	a.workers = append(a.workers, Worker{Name: "swap-settlement", Run: func(ctx context.Context) {
		a.Swaps.RunSettlement(ctx, jobs.WorkerOptions{Owner: swapOwner, Poll: cfg.JobsPollInterval, Log: a.Log})
	}})
	payouts := a.Withdrawals.Payouts(withdrawals.PayoutOptions{WorkerOptions: jobs.WorkerOptions{Poll: cfg.JobsPollInterval, Log: a.Log},
		Completed: a.Metrics.PayoutCompleted, Tracer: a.workerTracer(),
		ReconcileAfter: cfg.LiveRails.ReconcileAfter,
		Looked:         func(provider, status string) { a.Metrics.Rails().Reconciled(provider, "payout", status) },
		Flagged:        a.Metrics.Rails().Flagged})
	a.workers = append(a.workers, Worker{Name: "payouts", Run: payouts.Run})
	if cfg.LedgerCheckInterval > 0 {
		a.workers = append(a.workers, Worker{Name: "ledger-check", Run: func(ctx context.Context) { a.checkLedger(ctx, cfg.LedgerCheckInterval) }})
	}
	a.workers = append(a.workers, Worker{Name: "crypto-pay-expiry", Run: func(ctx context.Context) {
		a.CryptoPay.RunExpiry(ctx, jobs.WorkerOptions{Poll: cfg.JobsPollInterval, Log: a.Log})
	}})
	built = true
	return a, nil
}

// Handler is the whole HTTP surface.
func (a *App) Handler() http.Handler { return a.handler }

// RunWorkers starts the background workers; they stop when ctx ends, and
// the returned wait blocks until all have.
func (a *App) RunWorkers(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	for _, w := range a.workers {
		wg.Add(1)
		go func(w Worker) {
			defer wg.Done()
			a.Log.Debug("worker started", "worker", w.Name)
			w.Run(ctx)
			a.Log.Debug("worker stopped", "worker", w.Name)
		}(w)
	}
	return wg.Wait
}

// Close flushes the spans it can within a few seconds and the log lines
// buffered, and releases the database.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Tracing.Shutdown(ctx); err != nil {
		a.Log.Warn("tracing: spans not flushed at shutdown", "err", err)
	}
	_ = obs.Flush(a.Log)
	return a.DB.Close()
}

func (a *App) purgeIdempotency(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := a.Idem.Purge(ctx); err != nil {
				a.Log.Warn("idempotency purge failed", "err", err)
			} else if n > 0 {
				a.Log.Info("purged expired idempotency records", "count", n)
			}
			// Export tokens are of no use a minute after they were made;
			// an hour's grace keeps a used one's row for diagnosis.
			if n, err := a.Exports.Purge(ctx, a.Clock.Now().Add(-time.Hour)); err != nil {
				a.Log.Warn("export token purge failed", "err", err)
			} else if n > 0 {
				a.Log.Info("purged expired export tokens", "count", n)
			}
		}
	}
}

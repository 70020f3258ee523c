package server

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"syscall"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/obs"
)

// Main is the command line: serve (the default), merchant create,
// merchant roll-keys, pairs, migrate. It returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, err := EnvConfig()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	// Log lines are written in batches (obs.Buffered): a write(2) per
	// access-log line is a good part of a cheap request's CPU.
	out := obs.NewBuffered(stderr)
	defer out.Close()
	log := slog.New(out.Handler(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel})))
	slog.SetDefault(log)
	ctx := context.Background()
	if len(args) == 0 || args[0] == "serve" {
		var rest []string
		if len(args) > 0 {
			rest = args[1:]
		}
		return serve(ctx, cfg, log, rest, stdout, stderr)
	}
	if args[0] == "merchant" && len(args) > 1 {
		return merchantCmd(ctx, cfg, log, args[1], args[2:], stdout, stderr)
	}
	if args[0] == "migrate" {
		return migrateCmd(ctx, cfg, args[1:], stdout, stderr)
	}
	if args[0] == "pairs" {
		return pairsCmd(ctx, cfg, log, args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, usage)
	return 2
}

const usage = `usage:
  server [serve [--demo]]
  server merchant create --name NAME --email EMAIL
  server merchant roll-keys --merchant ID --mode test|live [--overlap DURATION]
  server pairs list|set-mid|enable|disable ...
  server migrate status|up`

// demoEmail is the demo merchant's address.
const demoEmail = "demo@example.com"

// parseFlags parses a command's flags and refuses anything left over (a
// typo such as "-name" without its value or a stray word would otherwise be
// ignored silently), printing why and the usage.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n%s\n", fs.Name(), fs.Arg(0), usage)
		return false
	}
	return true
}

func merchantCmd(ctx context.Context, cfg Config, log *slog.Logger, sub string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merchant "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "merchant name")
	email := fs.String("email", "", "merchant e-mail (notifications go here)")
	id := fs.String("merchant", "", "merchant id")
	mode := fs.String("mode", "", "test or live")
	overlap := fs.Duration("overlap", 0, "roll-keys: how long the old keys keep working (at most 24h; 0 revokes them at once)")
	if !parseFlags(fs, args, usage, stderr) {
		return 2
	}
	app, err := New(ctx, cfg, Options{Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer app.Close()
	var out any
	switch sub {
	case "create":
		out, err = app.Merchants.Create(ctx, *name, *email)
	case "roll-keys":
		out, err = app.Merchants.RollKeysWithOverlap(ctx, nil, *id, *mode, *overlap)
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
	if err != nil {
		e := apperr.As(err)
		msg := e.Message
		for _, f := range e.Fields {
			msg += fmt.Sprintf("; %s %s", f.Field, f.Message)
		}
		if e.Kind == apperr.Internal {
			msg = err.Error()
		}
		fmt.Fprintln(stderr, "error:", msg)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	return 0
}

func serve(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "on an empty database, create a demo merchant and print its keys")
	if !parseFlags(fs, args, usage, stderr) {
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	app, err := New(ctx, cfg, Options{Logger: log})
	if err != nil {
		log.Error("start-up failed", "err", err)
		return 1
	}
	defer app.Close()
	if *demo {
		if err := app.demoMerchant(ctx, cfg, stdout); err != nil {
			log.Error("demo merchant", "err", err)
			return 1
		}
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		log.Error("listen failed", "addr", cfg.ListenAddr, "err", err)
		return 1
	}
	stopAdmin, err := serveAdmin(cfg, app, log)
	if err != nil {
		log.Error("admin listener failed: set ADMIN_ADDR to a free address, or to an empty value to turn it off", "addr", cfg.AdminAddr, "err", err)
		ln.Close()
		return 1
	}
	defer stopAdmin()
	srv := NewHTTPServer(cfg, app.Handler())
	// Requests still running when the drain gives up are cut short with
	// a cause of their own, so that they are not taken for requests their
	// clients abandoned.
	base, cutShort := context.WithCancelCause(context.Background())
	defer cutShort(nil)
	srv.BaseContext = func(net.Listener) context.Context { return base }
	srv.RegisterOnShutdown(app.WebSockets.Shutdown)
	workCtx, stopWork := context.WithCancel(context.Background())
	waitWorkers := app.RunWorkers(workCtx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "database", app.DB.Dialect, "rails", cfg.Rails, "live_rails", cfg.LiveRails.LiveName(), "public_base_url", cfg.PublicBaseURL)
	if len(cfg.LiveRails.Live) == 0 {
		log.Warn("live mode runs on the sandbox rails (LIVE_RAILS=sandbox): live keys move no real money, and the sandbox simulations answer them")
	} else {
		log.Info("live mode runs on real providers; register their webhooks (docs/RAILS.md)", "providers", cfg.LiveRails.LiveName(),
			"webhook_base", cfg.PublicBaseURL+"/rails/{provider}/webhook")
	}

	select {
	case err := <-errc:
		log.Error("server stopped", "err", err)
		stopWork()
		waitWorkers()
		return 1
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests and workers")
	shCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	code := 0
	if err := srv.Shutdown(shCtx); err != nil {
		log.Error("drain incomplete", "err", err)
		code = 1
		// Requests still running (a database that stopped answering) get
		// their contexts ended, and with them their statements.
		cutShort(errShutdown)
		_ = srv.Close()
	}
	// The drained requests' lines go out now, whatever the workers do.
	_ = obs.Flush(log)
	stopWork()
	// Workers end their statements within a few seconds of their context
	// (store: stallGrace); one that does not still lets the process exit.
	stopped := make(chan struct{})
	go func() { waitWorkers(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(cfg.ShutdownTimeout):
		log.Error("workers did not stop in time; exiting without them", "waited", cfg.ShutdownTimeout)
		return 1
	}
	log.Info("stopped")
	return code
}

// errShutdown ends the requests still running when the drain gives up.
var errShutdown = errors.New("server: shutting down")

// demoMerchant creates a merchant on an empty database and prints its keys
// and what to try. Keys are shown once and stored only as hashes, so on
// later runs it says how to get new ones instead.
func (a *App) demoMerchant(ctx context.Context, cfg Config, stdout io.Writer) error {
	n, err := a.Merchants.Count(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		id := "MERCHANT_ID"
		if m, err := a.Merchants.ByEmail(ctx, demoEmail); err == nil {
			id = m.ID
		} else if !apperr.Is(err, apperr.NotFound) {
			return err
		}
		fmt.Fprintf(stdout, "\nThe database already has merchants; keys are shown once, when created or rolled.\n"+
			"New test keys for the demo merchant: bin/server merchant roll-keys --merchant %s --mode test\n\n", id)
		return nil
	}
	c, err := a.Merchants.Create(ctx, "Demo Merchant", demoEmail)
	if err != nil {
		return err
	}
	keys, _ := json.MarshalIndent(c, "", "  ")
	base := cfg.PublicBaseURL
	fmt.Fprintf(stdout, `
Demo merchant (sandbox; its keys are shown this once, copy them now):
%s

Try:
  curl -s -X POST %s/v1/merchant/public/wallets \
    -H 'X-API-KEY: %s' -H 'Content-Type: application/json' \
    -d '{"wallet_reference":"demo-'$RANDOM'","compliance":{"phone":"+2348012345678","firstname":"Ada","lastname":"Obi","email":"ada@example.com","documents":[{"document_type":"INTERNATIONAL_PASSPORT","document_file":"https://example.com/passport.png","document_file_type":"url","document_no":"A01234567"}]}}'

  Dashboard: %s/dashboard   (sign in with the test secret key above)
  GraphQL:   POST %s/graphql   (subscriptions: ws on the same path; GraphiQL: open it in a browser)
  API docs:  %s/docs   (OpenAPI: %s/openapi.json)
  Health:    %s/healthz  %s/readyz

`, keys, base, c.TestSecretKey, base, base, base, base, base, base)
	return nil
}

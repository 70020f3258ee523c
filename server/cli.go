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
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"merchantpay/internal/apperr"
)

// Main is the command line: serve (the default), merchant create,
// merchant roll-keys. It returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, err := EnvConfig()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
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
	if args[0] == "pairs" {
		return pairsCmd(ctx, cfg, log, args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, usage)
	return 2
}

const usage = `usage:
  server [serve [--demo]]
  server merchant create --name NAME --email EMAIL
  server merchant roll-keys --merchant ID --mode test|live
  server pairs list|set-mid|enable|disable ...`

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
		out, err = app.Merchants.RollKeys(ctx, *id, *mode)
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
	srv := &http.Server{
		Handler:           app.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	srv.RegisterOnShutdown(app.WebSockets.Shutdown)
	workCtx, stopWork := context.WithCancel(context.Background())
	waitWorkers := app.RunWorkers(workCtx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "database", app.DB.Dialect, "rails", cfg.Rails, "public_base_url", cfg.PublicBaseURL)

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
		_ = srv.Close()
	}
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

// demoMerchant creates a merchant on an empty database and prints its keys;
// on later runs it prints the keys it saved beside the database.
func (a *App) demoMerchant(ctx context.Context, cfg Config, stdout io.Writer) error {
	keyFile := filepath.Join("data", "demo-merchant.json")
	if strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
		keyFile = filepath.Join(filepath.Dir(strings.TrimPrefix(cfg.DatabaseURL, "sqlite:")), "demo-merchant.json")
	}
	n, err := a.Merchants.Count(ctx)
	if err != nil {
		return err
	}
	var keys []byte
	if n == 0 {
		c, err := a.Merchants.Create(ctx, "Demo Merchant", "demo@example.com")
		if err != nil {
			return err
		}
		keys, _ = json.MarshalIndent(c, "", "  ")
		// The merchant is committed: its keys are printed below whatever
		// happens to the file, or they could never be shown again.
		err = os.MkdirAll(filepath.Dir(keyFile), 0o700)
		if err == nil {
			err = os.WriteFile(keyFile, keys, 0o600)
		}
		if err != nil {
			a.Log.Warn("demo merchant: keys not saved; they are printed once here", "file", keyFile, "err", err)
			keyFile = "nowhere: copy them now"
		}
	} else if keys, err = os.ReadFile(keyFile); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(stdout, "The database already has merchants; roll a key pair with: bin/server merchant roll-keys --merchant ID --mode test")
			return nil
		}
		return err
	}
	var c struct {
		MerchantID    string `json:"merchant_id"`
		TestSecretKey string `json:"test_secret_key"`
	}
	_ = json.Unmarshal(keys, &c)
	if n > 0 {
		// Keys saved on an earlier run may have been rolled since: printing
		// them would hand out keys that no longer work.
		if _, err := a.Merchants.Authenticate(ctx, c.TestSecretKey); err != nil {
			if apperr.As(err).Kind != apperr.Unauthorized {
				return err
			}
			fmt.Fprintf(stdout, "The demo merchant's keys saved in %s were rolled since; roll a key pair with: bin/server merchant roll-keys --merchant %s --mode test\n", keyFile, c.MerchantID)
			return nil
		}
	}
	base := cfg.PublicBaseURL
	fmt.Fprintf(stdout, `
Demo merchant (sandbox; keys saved in %s):
%s

Try:
  curl -s -X POST %s/v1/merchant/public/wallets \
    -H 'X-API-KEY: %s' -H 'Content-Type: application/json' \
    -d '{"wallet_reference":"demo-'$RANDOM'","compliance":{"phone":"+2348012345678","firstname":"Ada","lastname":"Obi","email":"ada@example.com","documents":[{"document_type":"INTERNATIONAL_PASSPORT","document_file":"https://example.com/passport.png","document_file_type":"url","document_no":"A01234567"}]}}'

  GraphQL: POST %s/graphql   (subscriptions: ws on the same path)
  Health:  %s/healthz  %s/readyz

`, keyFile, keys, base, c.TestSecretKey, base, base, base)
	return nil
}

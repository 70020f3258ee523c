package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// fanoutSuite connects subscribers to one service instance from a separate
// process, measures the service's memory per idle subscriber, then sends one
// withdrawal and times its withdrawal.pending event to every subscriber.
func fanoutSuite(ctx context.Context, o options, p *pg) error {
	fmt.Printf("\n== fanout: %d GraphQL subscriptions (graphql-transport-ws) on one instance, clients in a separate process (open files: %d)\n",
		o.subscribers, noFileLimit())
	s, m, _, err := setup(ctx, o, p, "fanout")
	if err != nil {
		return err
	}
	defer s.stop()
	bank := m.Bank
	before, err := s.mem()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), roleEnv+"="+roleSubscribers, "LOADTEST_URL="+s.URL, "LOADTEST_KEY="+m.Secret,
		"LOADTEST_N="+strconv.Itoa(o.subscribers), "LOADTEST_BANK="+bank)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	// The child says "connected <n> <seconds>" once every subscription is sent.
	if !lines.Scan() {
		return fmt.Errorf("subscriber process ended early")
	}
	fmt.Printf("subscribers: %s\n", lines.Text())
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := s.subscribers()
		if err != nil {
			return err
		}
		if n >= o.subscribers {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d subscriptions registered", n, o.subscribers)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // settle: buffers of the upgrade freed, GC done
	after, err := s.mem()
	if err != nil {
		return err
	}
	if o.profileDir != "" {
		for _, prof := range []string{"heap", "goroutine"} {
			path := filepath.Join(o.profileDir, "fanout."+prof+".pprof")
			if err := s.fetch("/debug/pprof/"+prof, path); err != nil {
				return err
			}
			fmt.Printf("    profile: %s\n", path)
		}
	}
	n := float64(o.subscribers)
	heapPer := (float64(after.HeapInuse+after.StackInuse) - float64(before.HeapInuse+before.StackInuse)) / n / 1024
	rssPer := (float64(after.RSS) - float64(before.RSS)) / n / 1024
	fmt.Printf("service memory: heap+stacks %.1f MiB -> %.1f MiB, RSS %.1f MiB -> %.1f MiB, goroutines %d -> %d\n",
		mib(before.HeapInuse+before.StackInuse), mib(after.HeapInuse+after.StackInuse), mib(before.RSS), mib(after.RSS),
		before.Goroutines, after.Goroutines)
	fmt.Printf("per idle subscriber: stacks %.1f KiB of ", float64(after.StackInuse-before.StackInuse)/n/1024)
	fmt.Printf("heap+stacks %.1f KiB, RSS %.1f KiB (target <= 30 KiB): %s\n",
		heapPer, rssPer, verdictOf(rssPer <= 30 && heapPer <= 30))

	// One event: the child sends a withdrawal and times its arrival.
	fmt.Fprintln(stdin, "go")
	if !lines.Scan() {
		return fmt.Errorf("subscriber process ended before the event")
	}
	var r fanoutResult
	if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
		return fmt.Errorf("subscriber result %q: %w", lines.Text(), err)
	}
	fmt.Printf("one event to %d subscribers: request answered in %.1f ms; first subscriber %.1f ms, median %.1f ms, last %.1f ms after the answer (%d received)\n",
		o.subscribers, r.AnsweredMs, r.FirstMs, r.MedianMs, r.LastMs, r.Received)
	fmt.Printf("all subscribers have the event %.1f ms after the request was sent (target <= 1000 ms): %s\n",
		r.AnsweredMs+r.LastMs, verdictOf(r.Received == o.subscribers && r.AnsweredMs+r.LastMs <= 1000))
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func verdictOf(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

type fanoutResult struct {
	Received   int     `json:"received"`
	AnsweredMs float64 `json:"answered_ms"`
	FirstMs    float64 `json:"first_ms"`
	MedianMs   float64 `json:"median_ms"`
	LastMs     float64 `json:"last_ms"`
}

// runSubscribersRole is the client process of the fan-out benchmark.
func runSubscribersRole() int {
	raiseNoFile()
	base, key := os.Getenv("LOADTEST_URL"), os.Getenv("LOADTEST_KEY")
	n, _ := strconv.Atoi(os.Getenv("LOADTEST_N"))
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/graphql"
	var (
		mu       sync.Mutex
		arrivals []time.Time
		got      = make(chan struct{}, n)
		conns    = make([]*websocket.Conn, n)
		failed   atomic.Int64
	)
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := subscribe(wsURL, key)
			if err != nil {
				if failed.Add(1) == 1 {
					fmt.Fprintln(os.Stderr, "subscriber:", err)
				}
				return
			}
			conns[i] = c
			go func() {
				for {
					var msg struct {
						Type string `json:"type"`
					}
					if err := c.ReadJSON(&msg); err != nil {
						return
					}
					switch msg.Type {
					case "ping":
						_ = c.WriteJSON(map[string]string{"type": "pong"})
					case "next":
						mu.Lock()
						arrivals = append(arrivals, time.Now())
						mu.Unlock()
						got <- struct{}{}
					}
				}
			}()
		}(i)
	}
	wg.Wait()
	fmt.Printf("connected %d (failed %d) in %.1f s\n", n-int(failed.Load()), failed.Load(), time.Since(start).Seconds())
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return 0
	}
	bank := os.Getenv("LOADTEST_BANK")
	body := fmt.Sprintf(`{"beneficiary":{"email":"ada@example.com","bank":%q,"account_name":"Ada Obi","account_number":"0123456789"},"amount":100,"currency":"NGN"}`, bank)
	req, _ := http.NewRequest("POST", base+"/v1/merchant/public/transactions/withdraw", strings.NewReader(body))
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res.Body.Close()
	answered := time.Now()
	want := n - int(failed.Load())
	timeout := time.After(30 * time.Second)
	for i := 0; i < want; i++ {
		select {
		case <-got:
		case <-timeout:
			i = want
		}
	}
	mu.Lock()
	defer mu.Unlock()
	r := fanoutResult{Received: len(arrivals), AnsweredMs: ms(answered.Sub(sent))}
	if len(arrivals) > 0 {
		sortTimes(arrivals)
		r.FirstMs = ms(arrivals[0].Sub(answered))
		r.MedianMs = ms(arrivals[len(arrivals)/2].Sub(answered))
		r.LastMs = ms(arrivals[len(arrivals)-1].Sub(answered))
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
	return 0
}

func subscribe(wsURL, key string) (*websocket.Conn, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 30 * time.Second,
		ReadBufferSize: 1024, WriteBufferSize: 1024}
	c, _, err := d.Dial(wsURL, nil)
	if err != nil {
		return nil, err
	}
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]string{"X-API-KEY": key}}); err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var msg struct {
			Type string `json:"type"`
		}
		if err := c.ReadJSON(&msg); err != nil {
			c.Close()
			return nil, err
		}
		if msg.Type == "connection_ack" {
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	err = c.WriteJSON(map[string]any{"id": "1", "type": "subscribe",
		"payload": map[string]any{"query": "subscription { events { id event transaction { reference status } } }"}})
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func sortTimes(ts []time.Time) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
}

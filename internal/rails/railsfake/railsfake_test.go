package railsfake

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// fake counts the calls its route acted on and records each path.
type fake struct {
	*Base[string]
	acted atomic.Int32
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Handle(w, r, func(r *http.Request, _ []byte) string { return r.URL.Path },
		func(*http.Request, []byte) (int, any) {
			f.acted.Add(1)
			return http.StatusCreated, map[string]string{"ok": "yes"}
		})
}

func start(t *testing.T) *fake {
	f := &fake{Base: NewBase[string](func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) })}
	f.Serve(f)
	t.Cleanup(f.Close)
	return f
}

func call(t *testing.T, f *fake, path string, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL()+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestFailuresApplyInOrderBeforeOrAfterActing(t *testing.T) {
	f := start(t)
	f.FailNext(ServerErrorBefore, None, ServerErrorAfter, TimeoutBefore, TimeoutAfter)
	want := []struct {
		status int
		acted  int32
	}{
		{http.StatusTeapot, 0}, {http.StatusCreated, 1}, {http.StatusTeapot, 2}, {0, 2}, {0, 3}, {http.StatusCreated, 4},
	}
	for i, w := range want {
		if got := call(t, f, "/c", 300*time.Millisecond); got != w.status {
			t.Fatalf("call %d: status %d, want %d", i, got, w.status)
		}
		// A held call is released when its client gives up; wait for it.
		deadline := time.Now().Add(2 * time.Second)
		for f.acted.Load() != w.acted && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := f.acted.Load(); got != w.acted {
			t.Fatalf("call %d: acted on %d calls, want %d", i, got, w.acted)
		}
	}
	if got := f.Requests(); len(got) != len(want) || got[0] != "/c" {
		t.Fatalf("requests %v, want %d recorded", got, len(want))
	}
}

func TestCloseReleasesHeldCalls(t *testing.T) {
	f := start(t)
	f.FailNext(TimeoutBefore)
	done := make(chan struct{})
	go func() {
		call(t, f, "/held", time.Minute)
		close(done)
	}()
	for len(f.Requests()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() {
		f.Close()
		close(closed)
	}()
	for _, ch := range []chan struct{}{done, closed} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("Close left the held call waiting")
		}
	}
}

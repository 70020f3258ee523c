package server_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// pgBin is where the machine's PostgreSQL server binaries are.
const pgBin = "/usr/lib/postgresql/15/bin"

// pgCluster is a throwaway PostgreSQL server of the test's own, for what
// the shared test server must not be put through (a restart as a standby,
// a promotion). Its files are in a temporary directory owned by the
// postgres user, which runs it when the test runs as root (PostgreSQL
// refuses to run as root).
type pgCluster struct {
	t    *testing.T
	dir  string // the cluster's directory; its socket is there too
	port int
	as   []string // the command prefix that runs a binary as postgres
}

// newPGCluster initialises and starts a cluster, stopped and removed after
// the test. It skips the test when the PostgreSQL server binaries are not
// installed.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(pgBin, b)); err != nil {
			t.Skipf("postgres binaries (initdb, pg_ctl, postgres) not in %s: %v", pgBin, err)
		}
	}
	c := &pgCluster{t: t}
	dir, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			t.Skipf("running the postgres binaries as root needs runuser: %v", err)
		}
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running the postgres binaries as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.as = []string{runuser, "-u", "postgres", "--"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	c.start()
	t.Cleanup(func() { _ = c.exec("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop") })
	return c
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the cluster's postgres database.
func (c *pgCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func (c *pgCluster) start() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir), "start")
}

// stop shuts the server down cleanly (fast: sessions are ended).
func (c *pgCluster) stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
}

// restartAsStandby stops the server and starts it again as a hot standby
// with no primary: it stays in recovery, serving reads only, as a demoted
// primary does mid-failover.
func (c *pgCluster) restartAsStandby() {
	c.t.Helper()
	c.stop()
	c.run("touch", filepath.Join(c.data(), "standby.signal"))
	c.start()
}

// promote ends the recovery: the server takes writes again.
func (c *pgCluster) promote() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-w", "promote")
}

func (c *pgCluster) run(name string, args ...string) {
	c.t.Helper()
	if err := c.exec(name, args...); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("%s: %v\nserver log:\n%s", name, err, log)
	}
}

func (c *pgCluster) exec(name string, args ...string) error {
	path := name
	if name != "touch" {
		path = filepath.Join(pgBin, name)
	}
	argv := append(append(append([]string{}, c.as...), path), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

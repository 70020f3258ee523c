package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// cpuSample is CPU time used so far by the harness, the service and the
// PostgreSQL server's processes, and by the whole machine.
type cpuSample struct {
	at               time.Time
	harness, service time.Duration
	postgres         pgCPU
	machineBusy      time.Duration
}

// pgCPU is the CPU time of each PostgreSQL process, by pid.
type pgCPU map[int]time.Duration

// since is what the processes of p used after earlier: a backend that
// exited in between (pgbench's, just before a phase) is left out rather
// than counted as negative time, and one started in between counts in
// full.
func (p pgCPU) since(earlier pgCPU) time.Duration {
	var d time.Duration
	for pid, t := range p {
		d += t - earlier[pid]
	}
	return d
}

func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

func sampleCPU(servicePID int) cpuSample {
	c := cpuSample{at: time.Now(), harness: procCPU(os.Getpid())}
	if servicePID > 0 {
		c.service = procCPU(servicePID)
	}
	c.postgres = pgCPU{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(d + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		c.postgres[pid] = procCPU(pid)
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line := strings.SplitN(string(b), "\n", 2)[0]
		f := strings.Fields(line)
		var busy int64
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i == 3 || i == 4 { // idle, iowait
				continue
			}
			busy += n
		}
		c.machineBusy = time.Duration(busy) * time.Second / clockTicks
	}
	return c
}

// cpuSplit says where the cores went between two samples, in cores used.
func cpuSplit(a, b cpuSample) string {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return ""
	}
	c := func(x, y time.Duration) float64 { return (y - x).Seconds() / wall }
	return fmt.Sprintf("cores busy %.2f: load generator %.2f, service %.2f, postgres %.2f",
		c(a.machineBusy, b.machineBusy), c(a.harness, b.harness), c(a.service, b.service), b.postgres.since(a.postgres).Seconds()/wall)
}

package main

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `earshot helper --challenge` stopped by SIGTERM exits 0, as the helper
// does (its -h and docs/helper.md), wherever the stop finds it: here
// while it waits for the server's GET /proxy, before the browser opens.
func TestHelperChallengeStoppedBySignal(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done() // the answer never comes: the helper waits
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cmd := exec.Command(binary, "helper", "--challenge", "x")
	cmd.Env = append(baseEnv(dir), "EARSHOT_HELPER_SERVER="+srv.URL, "EARSHOT_HELPER_KEY=svc_ingest_test",
		"EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the helper ended before asking for the proxy: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the helper never asked for the proxy")
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stopped by SIGTERM, the helper exited with %v, want 0:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the helper did not stop within 30s of SIGTERM")
	}
}

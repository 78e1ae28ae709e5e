package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startMock runs `earshot mock` with args and returns its base URL.
func startMock(t *testing.T, env []string, args ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mock"}, args...)...)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("earshot mock exited with %v", err)
		}
	}
	select {
	case a := <-addr:
		return "http://" + a, stop
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("earshot mock did not listen")
	}
	return "", nil
}

func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	return v
}

func TestMockServesSeededStateAndKeepsIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := baseEnv(dir)
	state := filepath.Join(dir, "mock.json")
	base, stop := startMock(t, env, "--state", state)
	if ks := getJSON(t, base+"/keywords")["keywords"].([]any); len(ks) == 0 {
		t.Fatal("no seeded keywords")
	}
	resp, err := http.Post(base+"/keywords", "application/json", strings.NewReader(`{"phrase":"walk-in queue test","platform":"x"}`))
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("POST /keywords: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	stop()

	base, stop = startMock(t, append(env, "EARSHOT_MOCK_STATE="+state))
	defer stop()
	found := false
	for _, k := range getJSON(t, base+"/keywords")["keywords"].([]any) {
		found = found || k.(map[string]any)["phrase"] == "walk-in queue test"
	}
	if !found {
		t.Fatal("the keyword did not survive a restart with the state file")
	}
	if v := getJSON(t, base+"/feed/myspace"); v["error"] == nil {
		t.Fatalf("invalid platform: %v", v)
	}
}

func mustGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

func mockCall(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

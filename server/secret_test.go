package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestSecretKeyGeneratedOnceAndShared(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DatabaseURL: "sqlite://" + filepath.Join(dir, "earshot.db")}
	keys := make([]string, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() { // processes starting at once agree on one key
			defer wg.Done()
			k, err := SecretKey(cfg, quiet)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if k != keys[0] || len(k) < 32 {
			t.Fatalf("keys differ or are short: %q", keys)
		}
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info, err)
	}
	if k, _ := SecretKey(cfg, quiet); k != keys[0] {
		t.Fatal("a later start read another key")
	}
	if k, _ := SecretKey(Config{SecretKey: "given-secret-of-at-least-32-chars!!", DatabaseURL: cfg.DatabaseURL}, quiet); k != "given-secret-of-at-least-32-chars!!" {
		t.Fatal("EARSHOT_SECRET_KEY does not win")
	}
	os.WriteFile(filepath.Join(dir, KeyFile), []byte("short\n"), 0o600)
	if _, err := SecretKey(cfg, quiet); err == nil {
		t.Fatal("a short key file was accepted")
	}
}

package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name of the generated secret key in the data directory.
const KeyFile = "earshot.key"

// SecretKey returns EARSHOT_SECRET_KEY or, when it is unset, the key kept
// in the data directory (beside the SQLite file, or the working directory
// for Postgres), generating it on first run. It warns, because that key
// must be kept with the backups and shared by every replica.
func SecretKey(cfg Config, log *slog.Logger) (string, error) {
	if cfg.SecretKey != "" {
		return cfg.SecretKey, nil
	}
	dir := "."
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite://"); ok {
		if path == ":memory:" {
			log.Warn("EARSHOT_SECRET_KEY is unset and the database is in memory: using a key that lives as long as the process")
			return randomKey()
		}
		dir = filepath.Dir(path)
	}
	file := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		created, err := createKeyFile(file)
		switch {
		case err == nil:
			log.Warn("EARSHOT_SECRET_KEY is unset: generated a key; keep it with your backups and give every replica the same one", "file", file)
			return created, nil
		case !errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("EARSHOT_SECRET_KEY is unset and %s cannot be written: %w", file, err)
		}
		b, err = os.ReadFile(file) // another process made it first
		if err != nil {
			return "", fmt.Errorf("EARSHOT_SECRET_KEY is unset and %s cannot be read: %w", file, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("EARSHOT_SECRET_KEY is unset and %s cannot be read: %w", file, err)
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 32 {
		return "", fmt.Errorf("%s holds a key shorter than 32 bytes", file)
	}
	log.Warn("EARSHOT_SECRET_KEY is unset: using the key kept in the data directory", "file", file)
	return key, nil
}

// createKeyFile writes a new random key to file, failing with fs.ErrExist
// when the file is there already. The key is written to a temporary file
// and linked into place, so no process ever reads a half-written key.
func createKeyFile(file string) (string, error) {
	key, err := randomKey()
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".earshot.key-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(key + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Link(tmp.Name(), file)
	}
	return key, err
}

func randomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

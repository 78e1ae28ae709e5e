package app

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
		key, err := randomKey()
		if err != nil {
			return "", err
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case errors.Is(err, fs.ErrExist): // another process made it first
			b, err = os.ReadFile(file)
		case err == nil:
			_, err = f.WriteString(key + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				log.Warn("EARSHOT_SECRET_KEY is unset: generated a key; keep it with your backups and give every replica the same one", "file", file)
				return key, nil
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("EARSHOT_SECRET_KEY is unset and %s cannot be used: %w", file, err)
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 32 {
		return "", fmt.Errorf("%s holds a key shorter than 32 characters", file)
	}
	log.Warn("EARSHOT_SECRET_KEY is unset: using the key kept in the data directory", "file", file)
	return key, nil
}

func randomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

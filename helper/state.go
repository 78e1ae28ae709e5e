package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// State holds the checkpoints of a helper in one file, per server: how
// far each listing was read and sent. It is written whole to a
// temporary file and renamed over the old one, so a helper stopped at
// any moment leaves either the old checkpoints or the new ones.
type State struct {
	path   string
	server string

	mu  sync.Mutex
	all map[string]map[string]string // server → key → value
}

// DefaultStatePath is the state file in the user's config directory.
func DefaultStatePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "earshot", "helper-state.json"), nil
}

// OpenState reads the checkpoints kept at path for server; a missing
// file is an empty state. The server is named as NewClient reads it,
// without a trailing slash, so that one deployment keeps one set of
// checkpoints however its address is written.
func OpenState(path, server string) (*State, error) {
	server = strings.TrimRight(server, "/")
	s := &State{path: path, server: server, all: map[string]map[string]string{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, &s.all); err != nil {
			return nil, fmt.Errorf("the state file %s is not the helper's: %w", path, err)
		}
	}
	if s.all == nil { // the file held null
		s.all = map[string]map[string]string{}
	}
	if s.all[server] == nil {
		// Kept by an older helper under the address as it was written.
		for k, v := range s.all {
			if v != nil && strings.TrimRight(k, "/") == server {
				s.all[server] = v
				delete(s.all, k)
				break
			}
		}
	}
	if s.all[server] == nil {
		s.all[server] = map[string]string{}
	}
	return s, nil
}

// Get returns the checkpoint under key, "" for none.
func (s *State) Get(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all[s.server][key]
}

// Set moves the checkpoints of marks and writes the file.
func (s *State) Set(marks map[string]string) error {
	if len(marks) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range marks {
		s.all[s.server][k] = v
	}
	return s.write()
}

// Prune drops the checkpoints that keep refuses and writes the file when
// any went. keep must not call s.
func (s *State) Prune(keep func(key string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.all[s.server])
	maps.DeleteFunc(s.all[s.server], func(k, _ string) bool { return !keep(k) })
	if len(s.all[s.server]) == n {
		return nil
	}
	return s.write()
}

// write writes the whole state; s.mu is held.
func (s *State) write() error {
	b, err := json.MarshalIndent(s.all, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".helper-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing is left to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

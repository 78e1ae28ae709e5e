package legacymock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
)

// stateVersion is written into the state file so a later layout can tell
// an old file apart.
const stateVersion = 1

// stateFormat marks a file the mock wrote. A file without it is refused
// and left as it is: --state pointed at the wrong file (a tsconfig.json
// whose fields happen to fit) must not be adopted and overwritten.
const stateFormat = "earshot-mock-state"

// Bounds on what the state may take, so that no request grows the file
// (and the memory holding it) by more than a little: maxGrowth per
// change, maxState in all. Field lengths are bounded where bodies are
// decoded (maxString, maxItems); these catch whatever adds up past them.
const (
	maxGrowth = 64 << 10
	maxState  = 8 << 20
)

// state is everything the mock persists. The feed is static and is not
// part of it.
type state struct {
	Format      string         `json:"format"`
	Version     int            `json:"version"`
	Accounts    []account      `json:"accounts"`
	Communities []community    `json:"communities"`
	Keywords    []keyword      `json:"keywords"`
	Listings    []listing      `json:"listings"`
	APIKeys     []apiKey       `json:"apiKeys"`
	Brand       map[string]any `json:"brand"`
}

// result is what a store operation hands back to its endpoint: the HTTP
// status and the payload, encoded while the lock is still held so no
// response ever shares memory with the live state.
type result struct {
	status int
	body   any
}

func ok(body any) result      { return result{status: 200, body: body} }
func created(body any) result { return result{status: 201, body: body} }

// okOrCreated answers 201 when the row was just added, else 200.
func okOrCreated(added bool, body any) result {
	if added {
		return created(body)
	}
	return ok(body)
}

// store owns the state. Every operation, read or write, runs under one
// mutex; a write is persisted before the lock is released, and a failed
// write (a rule said no, or the disk did) rolls the state back to the last
// saved copy, so callers never see half of a mutation.
type store struct {
	mu    sync.Mutex
	st    *state
	saved []byte // encoding of the last good state
	path  string // "" keeps the state in memory only
	now   func() time.Time
}

func openStore(path string, now func() time.Time) (*store, error) {
	s := &store{path: path, now: now}
	st, err := loadState(path)
	if err != nil {
		return nil, err
	}
	fresh := st == nil
	if fresh {
		if st, err = seedState(); err != nil {
			return nil, err
		}
	}
	s.st = st
	if s.saved, err = encodeState(st); err != nil {
		return nil, err
	}
	// Writing the seeded state at once makes a bad path fail at start
	// rather than on the first click, and shows QA where the file lives.
	if fresh && path != "" {
		if err := writeAtomic(path, s.saved); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadState reads the state file; a missing file (or no path) gives nil,
// meaning "start from the seed". A file that cannot be parsed is an error
// rather than a silent reset, so a typo never wipes someone's state.
func loadState(path string) (*state, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("legacymock: read state: %w", err)
	}
	if err := checkFormat(data); err != nil {
		return nil, fmt.Errorf("legacymock: state file %s %w; it is left untouched: give --state another path, or delete the file to start from the seed", path, err)
	}
	var st state
	if err := unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("legacymock: state file %s is not valid: %w", path, err)
	}
	st.fillNils()
	return &st, nil
}

// legacyKeys are the top-level keys of the files written before the
// format marker: such a file, with version 1 and exactly these keys, is
// still the mock's own.
var legacyKeys = []string{"accounts", "apiKeys", "brand", "communities", "keywords", "listings", "version"}

// checkFormat says whether data is a state file the mock wrote: a JSON
// object with the format marker and a version it reads.
func checkFormat(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("is not valid: %w", err)
	}
	var head struct {
		Format  *string `json:"format"`
		Version int     `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("is not valid: %w", err)
	}
	switch {
	case head.Format == nil && head.Version == 1 && slices.Equal(slices.Sorted(maps.Keys(top)), legacyKeys):
		return nil
	case head.Format == nil || *head.Format != stateFormat:
		return fmt.Errorf(`was not written by earshot mock (it lacks "format": %q)`, stateFormat)
	case head.Version < 1 || head.Version > stateVersion:
		return fmt.Errorf("has version %d; this earshot reads version %d", head.Version, stateVersion)
	}
	return nil
}

func encodeState(st *state) ([]byte, error) {
	return json.MarshalIndent(st, "", "  ")
}

// writeAtomic replaces path with data through a temporary file in the same
// directory and a rename, so a crash leaves either the old or the new file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("legacymock: write state: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("legacymock: write state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("legacymock: write state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("legacymock: write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("legacymock: write state: %w", err)
	}
	// The rename is in the directory: until it is synced, a power cut can
	// bring back the state before a change already answered. The new state
	// is in place either way, so a system that cannot sync a directory
	// (Windows) is not told the write failed.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// read runs fn over the state without saving it.
func (s *store) read(fn func(st *state) (result, error)) (reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.prune()
	res, err := fn(s.st)
	if err != nil {
		return reply{}, err
	}
	return encodeReply(res)
}

// write runs fn over the state and persists the outcome. When fn fails or
// the state cannot be saved, the state is restored from the last saved
// copy.
func (s *store) write(fn func(st *state) (result, error)) (reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.prune()
	res, err := fn(s.st)
	if err != nil {
		s.rollback()
		return reply{}, err
	}
	data, err := encodeState(s.st)
	if err == nil {
		if err = checkGrowth(len(s.saved), len(data)); err != nil {
			s.rollback()
			return reply{}, err
		}
	}
	if err == nil && s.path != "" {
		err = writeAtomic(s.path, data)
	}
	if err != nil {
		s.rollback()
		return reply{}, core.Wrap(core.KindInternal, err, "")
	}
	s.saved = data
	return encodeReply(res)
}

// checkGrowth refuses a change that takes the encoded state from before
// to after bytes when it adds more than maxGrowth or passes maxState.
func checkGrowth(before, after int) error {
	switch {
	case after > maxState && after > before:
		return core.Errorf(core.KindPayloadTooLarge, "the mock's state is full (%d MB): delete records, or reset it", maxState>>20)
	case after-before > maxGrowth:
		return core.Errorf(core.KindPayloadTooLarge, "this change would add %d KB to the mock's state; one request may add at most %d KB", (after-before+1023)>>10, maxGrowth>>10)
	}
	return nil
}

func (s *store) rollback() {
	var st state
	if err := unmarshal(s.saved, &st); err != nil {
		// saved was produced by encodeState; failing to read it back is a
		// programming error, and keeping the current state is the least bad.
		return
	}
	st.fillNils()
	s.st = &st
}

// timestamp formats t the way the mock's clients expect: UTC with
// milliseconds, as JavaScript's toISOString does.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (s *store) stamp() string { return timestamp(s.now()) }

// newID returns prefix-<unix ms>-<6 base-36 characters>, the account id
// format of the spec, used for every generated id of the mock.
func (s *store) newID(prefix string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return prefix + "-" + strconv.FormatInt(s.now().UnixMilli(), 10) + "-" + string(b)
}

// fillNils turns absent lists into empty ones so the API never answers
// null where a client expects an array.
func (st *state) fillNils() {
	if st.Accounts == nil {
		st.Accounts = []account{}
	}
	if st.Communities == nil {
		st.Communities = []community{}
	}
	if st.Keywords == nil {
		st.Keywords = []keyword{}
	}
	if st.Listings == nil {
		st.Listings = []listing{}
	}
	if st.APIKeys == nil {
		st.APIKeys = []apiKey{}
	}
	for i := range st.Communities {
		st.Communities[i].fillNils()
	}
	for i := range st.Listings {
		if st.Listings[i].Images == nil {
			st.Listings[i].Images = []string{}
		}
	}
	for i := range st.APIKeys {
		if st.APIKeys[i].Scopes.GroupIDs == nil {
			st.APIKeys[i].Scopes.GroupIDs = []string{}
		}
	}
	st.Format, st.Version = stateFormat, stateVersion
}

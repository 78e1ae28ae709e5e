package legacymock

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

// seedJSON is the state a fresh mock starts with: one personal facebook
// account and a reddit account, a catalog of communities (some already
// joined), tracked keywords, two listings, and the static feed.
//
//go:embed seed.json
var seedJSON []byte

type seedFile struct {
	Accounts    []account   `json:"accounts"`
	Communities []community `json:"communities"`
	Keywords    []keyword   `json:"keywords"`
	Listings    []listing   `json:"listings"`
	Feed        []feedItem  `json:"feed"`
}

// loadSeed parses the embedded seed afresh on every call, so each caller
// gets its own copy to mutate.
func loadSeed() (seedFile, error) {
	var sf seedFile
	if err := json.Unmarshal(seedJSON, &sf); err != nil {
		return seedFile{}, fmt.Errorf("legacymock: seed: %w", err)
	}
	return sf, nil
}

func seedState() (*state, error) {
	sf, err := loadSeed()
	if err != nil {
		return nil, err
	}
	st := &state{Accounts: sf.Accounts, Communities: sf.Communities, Keywords: sf.Keywords, Listings: sf.Listings}
	st.fillNils()
	st.prune()
	return st, nil
}

func seedKeywords() ([]keyword, error) {
	sf, err := loadSeed()
	if err != nil {
		return nil, err
	}
	if sf.Keywords == nil {
		sf.Keywords = []keyword{}
	}
	return sf.Keywords, nil
}

func seedFeed() ([]feedItem, error) {
	sf, err := loadSeed()
	if err != nil {
		return nil, err
	}
	sort.SliceStable(sf.Feed, func(i, j int) bool { return sf.Feed[i].PublishedAt > sf.Feed[j].PublishedAt })
	return sf.Feed, nil
}

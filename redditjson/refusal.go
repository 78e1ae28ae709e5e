package redditjson

import "encoding/json"

// CommunitySearch is where reddit sends a read of a community it does not
// know (deleted, renamed, mistyped): /subreddits/search.json?q=NAME (or
// .rss, or no suffix). The redirect is reddit's "no such community"; its
// answer, a listing of communities, would read as an empty listing.
const CommunitySearch = "/subreddits/search"

// Reason is the reason reddit's JSON body gives for refusing a community
// (`{"reason": "private", "message": "Forbidden", "error": 403}` for a
// private, quarantined or gated one, "banned" on a 404), or "" when the
// body gives none: a block page or a bare Forbidden may be about the
// account or the address instead. Only a short word of lowercase letters
// and "_" counts, so a stranger's page cannot put its words in a status.
func Reason(body []byte) string {
	var v struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &v) != nil || v.Reason == "" || len(v.Reason) > 32 {
		return ""
	}
	for _, r := range v.Reason {
		if (r < 'a' || r > 'z') && r != '_' {
			return ""
		}
	}
	return v.Reason
}

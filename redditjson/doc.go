// Package redditjson reads reddit's public Listing JSON, the answer of
// www.reddit.com/r/NAME/new.json and /r/NAME/comments.json
// ({"kind":"Listing","data":{"after":...,"children":[{"kind":"t3","data":{...}}]}}),
// and the fields of a post (t3) or comment (t1) in it. Reddit's own
// listings and the archives that mirror them (Arctic Shift, PullPush) use
// the same field names; the recorded answers in adapters/reddit/testdata
// are samples of each.
//
// Two programs read these answers: the server (adapters/reddit) and the
// helper that owners run (helper/reddit). It sits outside adapters/
// because adapters never import each other and the helper reaches nothing
// of the server; it imports only the standard library. It holds what both
// read the same way; what each makes of a thing (which posts to skip, how
// long a text may be, which community to credit) stays with each.
package redditjson

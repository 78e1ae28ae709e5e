package match_test

import (
	"fmt"

	"github.com/earshothq/earshot/match"
)

// Compile a phrase list once and share the Set; Find returns the indexes
// of the phrases a post holds. The title and each body part go in as
// separate texts, so no phrase is found across two of them.
func ExampleSet_Find() {
	phrases := []string{"acme crm", "go", "c++", "東京"}
	set := match.Compile(phrases)

	found := set.Find("Switching from ACME  CRM?", "We write Go and C++ in our 東京 office.")
	for _, i := range found {
		fmt.Println(phrases[i])
	}

	// Word boundaries: "go" is not in "google", and a phrase never spans
	// the title and the text.
	fmt.Println(set.Find("google it", "acme") == nil, set.Find("acme", "crm") == nil)
	// Output:
	// acme crm
	// go
	// c++
	// 東京
	// true true
}

// Scan reports each occurrence, overlapping ones too, and allocates
// nothing: the way to count how often each phrase occurs.
func ExampleSet_Scan() {
	set := match.Compile([]string{"new york", "york", "york city"})
	counts := make([]int, set.Len())
	set.Scan("New York City, then new york again", func(i int) { counts[i]++ })
	fmt.Println(counts)
	// Output:
	// [2 2 1]
}

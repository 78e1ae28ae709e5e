package reddit

// PlainText is plainText, for the tests of the reddit_test package.
var PlainText = plainText

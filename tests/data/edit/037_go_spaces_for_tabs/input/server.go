package server

import (
	"fmt"
	"net/http"
)

// Handler serves the status page - no auth needed.
func Handler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	fmt.Fprintf(w, "ok\n")
}

func count(items []string) int {
	n := 0
	for _, item := range items {
		if item != "" {
			n++
		}
	}
	return n
}

func countAll(groups [][]string) int {
	n := 0
	for _, group := range groups {
		n += count(group)
	}
	return n
}

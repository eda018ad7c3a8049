// Command racy has a data race: the test that proves a race-built
// process's report reaches the test that started it.
package main

import "fmt"

func main() {
	n := 0
	done := make(chan bool)
	go func() { n++; done <- true }()
	n++
	<-done
	fmt.Println(n)
}

package testenv_test

import (
	"fmt"
	"os"

	"github.com/ctxsel/ctxsel/internal/testenv"
)

func ExampleInCI() {
	os.Setenv("CI", "yes") // a word strconv.ParseBool rejects
	fmt.Println(testenv.InCI())
	os.Unsetenv("CI")
	fmt.Println(testenv.InCI())
	// Output:
	// true
	// false
}

package props_test

import (
	"fmt"

	"github.com/kaudit/kaudit/remediate/props"
)

func ExampleSet() {
	src := []byte("# Socket Server Settings\r\nsocket.listen.backlog.size = 50\r\nsocket.receive.buffer.bytes=102400\r\n")
	out, edits, err := props.Set(src, map[string]string{
		"socket.listen.backlog.size": "4096",
		"num.network.threads":        "8",
	}, props.AppendComment("set by kaudit"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", out)
	for _, e := range edits {
		fmt.Printf("%s line %d: %q → %q appended=%v\n", e.Key, e.Line, e.Old, e.New, e.Appended)
	}
	// Output:
	// "# Socket Server Settings\r\nsocket.listen.backlog.size = 4096\r\nsocket.receive.buffer.bytes=102400\r\n# set by kaudit\r\nnum.network.threads=8\r\n"
	// num.network.threads line 5: "" → "8" appended=true
	// socket.listen.backlog.size line 2: "50" → "4096" appended=false
}

package phases

// Dir is the direction a line travelled.
type Dir uint8

const (
	FromClient Dir = iota // client stdin -> server stdin
	FromServer            // server stdout -> client stdout
)

func (d Dir) String() string {
	if d == FromClient {
		return "client"
	}
	return "server"
}

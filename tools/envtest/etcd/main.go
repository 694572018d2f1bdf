// Command etcd is the etcd server, built from its published Go module so that the
// local control plane does not need a downloaded release binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

package stub

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Socket is a server's TCP socket bound the way vLLM binds its port
// (vllm's create_server_socket, called before the engine starts so that
// nothing takes the port while the model loads): with SO_REUSEADDR and
// SO_REUSEPORT, listening only once the server is up. Until then a
// connection is refused, and a second server started on the port (same
// user) binds it too; once both listen, the kernel splits connections
// between them.
type Socket struct{ fd int }

// BindReusePort binds host:port as vLLM does.
func BindReusePort(host, port string) (*Socket, error) {
	addr, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	family, sa := syscall.AF_INET, syscall.Sockaddr(nil)
	if ip4 := addr.IP.To4(); ip4 != nil || addr.IP == nil {
		in4 := &syscall.SockaddrInet4{Port: addr.Port}
		copy(in4.Addr[:], ip4)
		sa = in4
	} else {
		family = syscall.AF_INET6
		in6 := &syscall.SockaddrInet6{Port: addr.Port}
		copy(in6.Addr[:], addr.IP.To16())
		sa = in6
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	for _, opt := range []int{unix.SO_REUSEADDR, unix.SO_REUSEPORT} {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, opt, 1); err != nil {
			syscall.Close(fd)
			return nil, err
		}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("[Errno %d] %w", err, err) // Python's OSError form
	}
	return &Socket{fd: fd}, nil
}

// Listen starts listening (the server is up) and hands the socket over.
func (s *Socket) Listen() (net.Listener, error) {
	if err := syscall.Listen(s.fd, syscall.SOMAXCONN); err != nil {
		syscall.Close(s.fd)
		return nil, err
	}
	f := os.NewFile(uintptr(s.fd), "server socket")
	defer f.Close() // FileListener holds its own copy
	return net.FileListener(f)
}

// Port is the port the socket is bound to.
func (s *Socket) Port() (int, error) {
	sa, err := syscall.Getsockname(s.fd)
	if err != nil {
		return 0, err
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return a.Port, nil
	case *syscall.SockaddrInet6:
		return a.Port, nil
	}
	return 0, fmt.Errorf("socket bound to %T", sa)
}

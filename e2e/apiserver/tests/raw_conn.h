/* A raw TCP connection to 127.0.0.1:port for the API server's tests (lib/libtestsupport.a): rcvbuf
 * > 0 sets SO_RCVBUF before connecting (so the advertised window matches); reads time out after
 * 5 s. Fails the current cmocka test when the connection is refused. */
#ifndef APIS_TESTS_RAW_CONN_H
#define APIS_TESTS_RAW_CONN_H

int apis_test_connect(int port, int rcvbuf);

#endif

"""The Python SDK's pass-through for benches/function.rs.

crossplane-function-sdk-python serving a FunctionRunner that answers
`response.to(req)` and nothing else, the way a Python function starts:
`runtime.serve`. The bench runs it from a virtualenv it creates.
Usage: python function_sdk_python.py 127.0.0.1:PORT
"""

import sys

from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1


class PassThrough(grpcv1.FunctionRunnerServiceServicer):
    async def RunFunction(self, req, _context):  # noqa: N802 (gRPC's name)
        return response.to(req)


if __name__ == "__main__":
    runtime.serve(
        PassThrough(),
        sys.argv[1],
        creds=None,
        insecure=True,
        options=[("grpc.max_receive_message_length", 64 << 20)],
    )

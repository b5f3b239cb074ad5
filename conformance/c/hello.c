/*
 * hello.c -- the smallest real OpenCL application: find the platform, build a kernel
 * from source, run it, check the result on the host, release everything, print PASS.
 *
 * Used by `make demo` and as the target of a valgrind leak check. The platform is the
 * first whose name contains $CRANECL_TEST_PLATFORM (default "cranecl").
 * Build: cc -std=c11 -Wall -Wextra -O1 -o hello hello.c -lOpenCL
 * Exit status: 0 on PASS, 1 on any failure (with a message on stderr).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static const char *source =
    "kernel void saxpy(global float* y, global const float* x, float a) {\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

#define CHECK(call)                                                           \
    do {                                                                      \
        cl_int err_ = (call);                                                 \
        if (err_ != CL_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_); \
            return 1;                                                         \
        }                                                                     \
    } while (0)

static int contains_ci(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] && tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static cl_platform_id find_platform(const char *wanted) {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || count == 0)
        return NULL;
    cl_platform_id *ids = calloc(count, sizeof *ids);
    cl_platform_id found = NULL;
    if (ids && clGetPlatformIDs(count, ids, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < count && !found; i++) {
            char name[256] = {0};
            if (clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL) == CL_SUCCESS &&
                contains_ci(name, wanted))
                found = ids[i];
        }
    }
    free(ids);
    return found;
}

int main(void) {
    const char *wanted = getenv("CRANECL_TEST_PLATFORM");
    if (!wanted || !*wanted)
        wanted = "cranecl";
    cl_platform_id platform = find_platform(wanted);
    if (!platform) {
        fprintf(stderr, "no OpenCL platform named like \"%s\" (is OCL_ICD_VENDORS set?)\n", wanted);
        return 1;
    }
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    char dev_name[256] = {0};
    CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dev_name - 1, dev_name, NULL));

    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192] = {0};
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "clBuildProgram failed: %d\n%s\n", err, log);
        return 1;
    }
    cl_kernel kernel = clCreateKernel(program, "saxpy", &err);
    CHECK(err);

    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 1000.0f - (float)i;
    }
    cl_mem xb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    CHECK(err);
    cl_mem yb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &err);
    CHECK(err);
    const float a = 3.0f;
    CHECK(clSetKernelArg(kernel, 0, sizeof yb, &yb));
    CHECK(clSetKernelArg(kernel, 1, sizeof xb, &xb));
    CHECK(clSetKernelArg(kernel, 2, sizeof a, &a));
    size_t global = N, local = 64;
    cl_event done;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &done));
    CHECK(clEnqueueReadBuffer(queue, yb, CL_TRUE, 0, sizeof out, out, 1, &done, NULL));
    CHECK(clFinish(queue));

    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = a * x[i] + y[i];
        float diff = out[i] - want;
        if (diff < -1e-3f || diff > 1e-3f) {
            if (bad++ < 5)
                fprintf(stderr, "y[%d] = %g, want %g\n", i, out[i], want);
        }
    }

    CHECK(clReleaseEvent(done));
    CHECK(clReleaseMemObject(xb));
    CHECK(clReleaseMemObject(yb));
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(program));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(ctx));
    if (bad) {
        fprintf(stderr, "FAIL: %d of %d results wrong on %s\n", bad, N, dev_name);
        return 1;
    }
    printf("PASS: saxpy of %d floats on %s\n", N, dev_name);
    return 0;
}

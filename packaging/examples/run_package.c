/* run_package.c: loads a Tessera package with the C runtime interface,
 * fills its inputs with a fixed pattern, runs it twice (1 thread, then the
 * default), checks both runs agree bit for bit, and prints every output's
 * shape, first values and sum.
 *
 *   cc run_package.c -ltessera_package_runtime -o run_package
 *   ./run_package model.tar
 *
 * Exit codes: 0 ok, 1 the two runs differ, 2 the package was refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera_runtime.h"

static int fail(const char* what) {
    fprintf(stderr, "error: %s: %s\n", what, tessera_last_error());
    return 2;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PACKAGE.tar\n", argv[0]);
        return 2;
    }
    TesseraModel* m = tessera_model_load(argv[1]);
    if (!m) return fail("loading the package");

    for (int i = 0; i < tessera_model_num_inputs(m); ++i) {
        int64_t bytes = tessera_model_input_bytes(m, i);
        unsigned char* data = calloc((size_t)bytes + 1, 1);
        if (strcmp(tessera_model_input_dtype(m, i), "float32") == 0) {
            float* f = (float*)data;
            for (int64_t k = 0; k < bytes / 4; ++k) f[k] = (float)sin(0.1 * (double)k + i);
        }
        printf("input %s (%s, %d dims, %lld bytes)\n", tessera_model_input_name(m, i),
               tessera_model_input_dtype(m, i), tessera_model_input_ndim(m, i), (long long)bytes);
        if (tessera_model_set_input(m, i, data, (size_t)bytes) != TESSERA_OK) {
            free(data);
            return fail("setting an input");
        }
        free(data);
    }

    int status = 0;
    for (int i = 0; i < tessera_model_num_outputs(m) && status == 0; ++i) {
        size_t bytes = (size_t)tessera_model_output_bytes(m, i);
        unsigned char* first = malloc(bytes + 1);
        unsigned char* second = malloc(bytes + 1);
        if (tessera_model_set_num_threads(m, 1) != TESSERA_OK || tessera_model_run(m) != TESSERA_OK ||
            tessera_model_get_output(m, i, first, bytes) != TESSERA_OK ||
            tessera_model_set_num_threads(m, 0) != TESSERA_OK || tessera_model_run(m) != TESSERA_OK ||
            tessera_model_get_output(m, i, second, bytes) != TESSERA_OK) {
            free(first);
            free(second);
            return fail("running the package");
        }
        printf("output %s (%s) shape [", tessera_model_output_name(m, i),
               tessera_model_output_dtype(m, i));
        for (int d = 0; d < tessera_model_output_ndim(m, i); ++d)
            printf("%s%lld", d ? ", " : "", (long long)tessera_model_output_shape(m, i)[d]);
        printf("]");
        if (strcmp(tessera_model_output_dtype(m, i), "float32") == 0) {
            const float* f = (const float*)first;
            double sum = 0;
            for (size_t k = 0; k < bytes / 4; ++k) sum += f[k];
            printf(" first");
            for (size_t k = 0; k < 4 && k < bytes / 4; ++k) printf(" %.6g", f[k]);
            printf(" sum %.6g", sum);
        }
        printf("\n");
        if (memcmp(first, second, bytes) != 0) {
            fprintf(stderr, "error: output %d differs between runs\n", i);
            status = 1;
        }
        free(first);
        free(second);
    }
    printf("peak memory %lld bytes\n", (long long)tessera_model_peak_bytes(m));
    tessera_model_free(m);
    return status;
}

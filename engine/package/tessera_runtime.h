/* tessera_runtime.h: the C interface of libtessera_package_runtime, which
 * loads and runs packages written by `tessera compile` (no compiler, LLVM,
 * protobuf or Qt needed at run time).
 *
 *   TesseraModel* m = tessera_model_load("model.tar");
 *   if (!m) { fprintf(stderr, "%s\n", tessera_last_error()); return 2; }
 *   tessera_model_set_input(m, 0, data, bytes);
 *   tessera_model_run(m);
 *   tessera_model_get_output(m, 0, out, out_bytes);
 *   tessera_model_free(m);
 *
 * Functions returning int give TESSERA_OK (0) on success; on failure they
 * return another status and tessera_last_error() says why (per thread). */
#ifndef TESSERA_RUNTIME_H
#define TESSERA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TESSERA_API __attribute__((visibility("default")))
#else
#define TESSERA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum { TESSERA_OK = 0, TESSERA_USER_ERROR = 2, TESSERA_INTERNAL_ERROR = 3 };

typedef struct TesseraModel TesseraModel;

/** The message of the last failed call on this thread ("" if none). */
TESSERA_API const char* tessera_last_error(void);

/** Loads and verifies a package (checksums, format version, CPU features;
 *  a CUDA package needs a CUDA driver and device, else the error says "no
 *  CUDA device is available").
 *  NULL on failure. */
TESSERA_API TesseraModel* tessera_model_load(const char* package_path);
TESSERA_API void tessera_model_free(TesseraModel* model);

/** A package of several input shapes (`tessera compile --shape-set ...`
 *  repeated) holds one specialisation per set; 0 for a package of one.
 *  The first is selected at load. */
TESSERA_API int tessera_model_num_specializations(const TesseraModel* model);
/** Selects the specialisation compiled for these input shapes (input i has
 *  ndims[i] dims dims[i][0..]); the inputs, outputs and their sizes are then
 *  that specialisation's. TESSERA_USER_ERROR naming the package's shapes
 *  when it holds none for them (also for a package of one other shape). */
TESSERA_API int tessera_model_select_input_shapes(TesseraModel* model, int num_inputs,
                                                  const int* ndims, const int64_t* const* dims);

TESSERA_API int tessera_model_num_inputs(const TesseraModel* model);
TESSERA_API int tessera_model_num_outputs(const TesseraModel* model);
/** Name, dtype ("float32", "int64", ...), rank, dims and byte size of input
 *  or output i; NULL / -1 when i is out of range. Pointers live as long as
 *  the model. */
TESSERA_API const char* tessera_model_input_name(const TesseraModel* model, int i);
TESSERA_API const char* tessera_model_output_name(const TesseraModel* model, int i);
TESSERA_API const char* tessera_model_input_dtype(const TesseraModel* model, int i);
TESSERA_API const char* tessera_model_output_dtype(const TesseraModel* model, int i);
TESSERA_API int tessera_model_input_ndim(const TesseraModel* model, int i);
TESSERA_API int tessera_model_output_ndim(const TesseraModel* model, int i);
TESSERA_API const int64_t* tessera_model_input_shape(const TesseraModel* model, int i);
TESSERA_API const int64_t* tessera_model_output_shape(const TesseraModel* model, int i);
TESSERA_API int64_t tessera_model_input_bytes(const TesseraModel* model, int i);
TESSERA_API int64_t tessera_model_output_bytes(const TesseraModel* model, int i);

/** Copies `bytes` bytes (exactly the input's size) into input i. */
TESSERA_API int tessera_model_set_input(TesseraModel* model, int i, const void* data, size_t bytes);
/** Same, by the input's name. */
TESSERA_API int tessera_model_set_input_by_name(TesseraModel* model, const char* name,
                                                const void* data, size_t bytes);
/** Threads for parallel loops; 0 = the default (OMP_NUM_THREADS or all cores). */
TESSERA_API int tessera_model_set_num_threads(TesseraModel* model, int threads);
/** Runs every kernel once. */
TESSERA_API int tessera_model_run(TesseraModel* model);
/** Copies output i (exactly its size) into `data`. */
TESSERA_API int tessera_model_get_output(const TesseraModel* model, int i, void* data,
                                         size_t bytes);

/** Bytes of the planned arena (inputs, intermediates, outputs). */
TESSERA_API int64_t tessera_model_peak_bytes(const TesseraModel* model);
/** meta.json of the package (target, CPU features, versions, checksums). */
TESSERA_API const char* tessera_model_meta_json(const TesseraModel* model);
/** Runs `repeat` times and returns a JSON array, one object per kernel:
 *  {"kernel", "nodes": [names], "calls", "seconds", "flops", "bytes"};
 *  NULL on failure. Lives until the next call on this model. */
TESSERA_API const char* tessera_model_profile_json(TesseraModel* model, int repeat);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_RUNTIME_H */

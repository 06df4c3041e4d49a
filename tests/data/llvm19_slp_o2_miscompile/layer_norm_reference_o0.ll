; ModuleID = 'tessera'
source_filename = "tessera"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.vector.reduce.fadd.v8f32(float, <8 x float>) #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.sqrt.f32(float) #0

; Function Attrs: nounwind
define void @layer_norm_ref(ptr nocapture readonly %args) #1 {
entry:
  %T_mean.i = alloca [16 x i8], align 64
  %T_sum.i = alloca [128 x i8], align 64
  %0 = getelementptr inbounds ptr, ptr %args, i64 0
  %X = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %args, i64 1
  %gamma = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %args, i64 2
  %beta = load ptr, ptr %2, align 8
  %3 = getelementptr inbounds ptr, ptr %args, i64 3
  %T_norm = load ptr, ptr %3, align 8
  call void @llvm.experimental.noalias.scope.decl(metadata !0)
  call void @llvm.experimental.noalias.scope.decl(metadata !3)
  call void @llvm.experimental.noalias.scope.decl(metadata !5)
  call void @llvm.experimental.noalias.scope.decl(metadata !7)
  br label %i0.header.i

i0.header.i:                                      ; preds = %i0.body.i, %entry
  %i0.i = phi i64 [ 0, %entry ], [ %13, %i0.body.i ]
  %4 = icmp slt i64 %i0.i, 4
  br i1 %4, label %i0.body.i, label %i0.exit.i

i0.body.i:                                        ; preds = %i0.header.i
  %5 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0.i
  store float 0.000000e+00, ptr %5, align 4, !noalias !9
  %6 = mul nsw i64 %i0.i, 8
  %7 = getelementptr inbounds float, ptr %X, i64 %6
  %8 = load <8 x float>, ptr %7, align 4, !alias.scope !0, !noalias !10
  %9 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0.i
  %10 = load float, ptr %9, align 4, !noalias !9
  %11 = call reassoc float @llvm.vector.reduce.fadd.v8f32(float %10, <8 x float> %8)
  %12 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0.i
  store float %11, ptr %12, align 4, !noalias !9
  %13 = add nsw i64 %i0.i, 1
  br label %i0.header.i

i0.exit.i:                                        ; preds = %i0.header.i
  br label %i0.header1.i

i0.header1.i:                                     ; preds = %i0.body2.i, %i0.exit.i
  %i04.i = phi i64 [ 0, %i0.exit.i ], [ %19, %i0.body2.i ]
  %14 = icmp slt i64 %i04.i, 4
  br i1 %14, label %i0.body2.i, label %i0.exit3.i

i0.body2.i:                                       ; preds = %i0.header1.i
  %15 = getelementptr inbounds float, ptr %T_mean.i, i64 %i04.i
  %16 = getelementptr inbounds float, ptr %T_sum.i, i64 %i04.i
  %17 = load float, ptr %16, align 4, !noalias !9
  %18 = fmul float %17, 1.250000e-01
  store float %18, ptr %15, align 4, !noalias !9
  %19 = add nsw i64 %i04.i, 1
  br label %i0.header1.i

i0.exit3.i:                                       ; preds = %i0.header1.i
  br label %i0.header5.i

i0.header5.i:                                     ; preds = %i1.exit.i, %i0.exit3.i
  %i08.i = phi i64 [ 0, %i0.exit3.i ], [ %33, %i1.exit.i ]
  %20 = icmp slt i64 %i08.i, 4
  br i1 %20, label %i0.body6.i, label %i0.exit7.i

i0.body6.i:                                       ; preds = %i0.header5.i
  br label %i1.header.i

i0.exit7.i:                                       ; preds = %i0.header5.i
  br label %i0.header9.i

i1.header.i:                                      ; preds = %i1.body.i, %i0.body6.i
  %i1.i = phi i64 [ 0, %i0.body6.i ], [ %32, %i1.body.i ]
  %21 = icmp slt i64 %i1.i, 8
  br i1 %21, label %i1.body.i, label %i1.exit.i

i1.body.i:                                        ; preds = %i1.header.i
  %22 = mul nsw i64 %i08.i, 8
  %23 = add nsw i64 %22, %i1.i
  %24 = getelementptr inbounds float, ptr %T_sum.i, i64 %23
  %25 = mul nsw i64 %i08.i, 8
  %26 = add nsw i64 %25, %i1.i
  %27 = getelementptr inbounds float, ptr %X, i64 %26
  %28 = load float, ptr %27, align 4, !alias.scope !0, !noalias !10
  %29 = getelementptr inbounds float, ptr %T_mean.i, i64 %i08.i
  %30 = load float, ptr %29, align 4, !noalias !9
  %31 = fsub float %28, %30
  store float %31, ptr %24, align 4, !noalias !9
  %32 = add nsw i64 %i1.i, 1
  br label %i1.header.i

i1.exit.i:                                        ; preds = %i1.header.i
  %33 = add nsw i64 %i08.i, 1
  br label %i0.header5.i

i0.header9.i:                                     ; preds = %i0.body10.i, %i0.exit7.i
  %i012.i = phi i64 [ 0, %i0.exit7.i ], [ %47, %i0.body10.i ]
  %34 = icmp slt i64 %i012.i, 4
  br i1 %34, label %i0.body10.i, label %i0.exit11.i

i0.body10.i:                                      ; preds = %i0.header9.i
  %35 = getelementptr inbounds float, ptr %T_mean.i, i64 %i012.i
  store float 0.000000e+00, ptr %35, align 4, !noalias !9
  %36 = mul nsw i64 %i012.i, 8
  %37 = getelementptr inbounds float, ptr %T_sum.i, i64 %36
  %38 = load <8 x float>, ptr %37, align 4, !noalias !9
  %39 = mul nsw i64 %i012.i, 8
  %40 = getelementptr inbounds float, ptr %T_sum.i, i64 %39
  %41 = load <8 x float>, ptr %40, align 4, !noalias !9
  %42 = fmul <8 x float> %38, %41
  %43 = getelementptr inbounds float, ptr %T_mean.i, i64 %i012.i
  %44 = load float, ptr %43, align 4, !noalias !9
  %45 = call reassoc float @llvm.vector.reduce.fadd.v8f32(float %44, <8 x float> %42)
  %46 = getelementptr inbounds float, ptr %T_mean.i, i64 %i012.i
  store float %45, ptr %46, align 4, !noalias !9
  %47 = add nsw i64 %i012.i, 1
  br label %i0.header9.i

i0.exit11.i:                                      ; preds = %i0.header9.i
  br label %i0.header13.i

i0.header13.i:                                    ; preds = %i1.exit19.i, %i0.exit11.i
  %i016.i = phi i64 [ 0, %i0.exit11.i ], [ %71, %i1.exit19.i ]
  %48 = icmp slt i64 %i016.i, 4
  br i1 %48, label %i0.body14.i, label %layer_norm.body.exit

i0.body14.i:                                      ; preds = %i0.header13.i
  br label %i1.header17.i

i1.header17.i:                                    ; preds = %i1.body18.i, %i0.body14.i
  %i120.i = phi i64 [ 0, %i0.body14.i ], [ %70, %i1.body18.i ]
  %49 = icmp slt i64 %i120.i, 8
  br i1 %49, label %i1.body18.i, label %i1.exit19.i

i1.body18.i:                                      ; preds = %i1.header17.i
  %50 = mul nsw i64 %i016.i, 8
  %51 = add nsw i64 %50, %i120.i
  %52 = getelementptr inbounds float, ptr %T_norm, i64 %51
  %53 = mul nsw i64 %i016.i, 8
  %54 = add nsw i64 %53, %i120.i
  %55 = getelementptr inbounds float, ptr %T_sum.i, i64 %54
  %56 = load float, ptr %55, align 4, !noalias !9
  %57 = getelementptr inbounds float, ptr %T_mean.i, i64 %i016.i
  %58 = load float, ptr %57, align 4, !noalias !9
  %59 = fmul float %58, 1.250000e-01
  %60 = fadd float %59, 0x3EE4F8B580000000
  %61 = call float @llvm.sqrt.f32(float %60)
  %62 = fdiv float 1.000000e+00, %61
  %63 = fmul float %56, %62
  %64 = getelementptr inbounds float, ptr %gamma, i64 %i120.i
  %65 = load float, ptr %64, align 4, !alias.scope !3, !noalias !11
  %66 = fmul float %63, %65
  %67 = getelementptr inbounds float, ptr %beta, i64 %i120.i
  %68 = load float, ptr %67, align 4, !alias.scope !5, !noalias !12
  %69 = fadd float %66, %68
  store float %69, ptr %52, align 4, !alias.scope !7, !noalias !13
  %70 = add nsw i64 %i120.i, 1
  br label %i1.header17.i

i1.exit19.i:                                      ; preds = %i1.header17.i
  %71 = add nsw i64 %i016.i, 1
  br label %i0.header13.i

layer_norm.body.exit:                             ; preds = %i0.header13.i
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #2

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { nounwind "min-legal-vector-width"="512" "prefer-vector-width"="512" "target-cpu"="znver5" "target-features"="+prfchw,-cldemote,+avx,+aes,+sahf,+pclmul,-xop,+crc32,+xsaves,-avx512fp16,-usermsr,-sm4,-egpr,+sse4.1,+avx512ifma,+xsave,+sse4.2,-tsxldtrk,-sm3,-ptwrite,-widekl,+invpcid,+64bit,+xsavec,-avx10.1-512,+avx512vpopcntdq,+cmov,+avx512vp2intersect,+avx512cd,+movbe,-avxvnniint8,-ccmp,-amx-int8,-kl,-avx10.1-256,+evex512,+avxvnni,-rtm,+adx,+avx2,-hreset,-movdiri,-serialize,-sha512,+vpclmulqdq,+avx512vl,-uintr,-cf,+clflushopt,-raoint,-cmpccxadd,+bmi,-amx-tile,+sse,+gfni,-avxvnniint16,-amx-fp16,-ndd,+xsaveopt,+rdrnd,+avx512f,-amx-bf16,+avx512bf16,+avx512vnni,-push2pop2,+cx8,+avx512bw,+sse3,-pku,+fsgsbase,+clzero,-mwaitx,-lwp,+lzcnt,+sha,-movdir64b,-ppx,-wbnoinvd,-enqcmd,-avxneconvert,-tbm,-pconfig,-amx-complex,+ssse3,+cx16,+bmi2,+fma,+popcnt,-avxifma,+f16c,+avx512bitalg,-rdpru,+clwb,+mmx,+sse2,+rdseed,+avx512vbmi2,-prefetchi,+rdpid,-fma4,+avx512vbmi,+shstk,+vaes,-waitpkg,-sgx,+fxsr,+avx512dq,+sse4a" }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!0 = !{!1}
!1 = distinct !{!1, !2, !"layer_norm.body: %X"}
!2 = distinct !{!2, !"layer_norm.body"}
!3 = !{!4}
!4 = distinct !{!4, !2, !"layer_norm.body: %gamma"}
!5 = !{!6}
!6 = distinct !{!6, !2, !"layer_norm.body: %beta"}
!7 = !{!8}
!8 = distinct !{!8, !2, !"layer_norm.body: %T_norm"}
!9 = !{!1, !4, !6, !8}
!10 = !{!4, !6, !8}
!11 = !{!1, !6, !8}
!12 = !{!1, !4, !8}
!13 = !{!1, !4, !6}

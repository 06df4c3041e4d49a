; ModuleID = 'tessera'
source_filename = "tessera"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.vector.reduce.fadd.v8f32(float, <8 x float>) #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.sqrt.f32(float) #0

; Function Attrs: nounwind
define void @layer_norm(ptr nocapture readonly %args) #1 {
entry:
  %T_mean.i = alloca [128 x i8], align 64
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
  br label %i0_1.header.i

i0_1.header.i:                                    ; preds = %i0_1.body.i, %i0.exit.i
  %i0_1.i = phi i64 [ 0, %i0.exit.i ], [ %19, %i0_1.body.i ]
  %14 = icmp slt i64 %i0_1.i, 4
  br i1 %14, label %i0_1.body.i, label %i0_1.exit.i

i0_1.body.i:                                      ; preds = %i0_1.header.i
  %15 = getelementptr inbounds float, ptr %T_mean.i, i64 %i0_1.i
  %16 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0_1.i
  %17 = load float, ptr %16, align 4, !noalias !9
  %18 = fmul float %17, 1.250000e-01
  store float %18, ptr %15, align 4, !noalias !9
  %19 = add nsw i64 %i0_1.i, 1
  br label %i0_1.header.i

i0_1.exit.i:                                      ; preds = %i0_1.header.i
  br label %i0_2.header.i

i0_2.header.i:                                    ; preds = %i1.exit.i, %i0_1.exit.i
  %i0_2.i = phi i64 [ 0, %i0_1.exit.i ], [ %33, %i1.exit.i ]
  %20 = icmp slt i64 %i0_2.i, 4
  br i1 %20, label %i0_2.body.i, label %i0_2.exit.i

i0_2.body.i:                                      ; preds = %i0_2.header.i
  br label %i1.header.i

i0_2.exit.i:                                      ; preds = %i0_2.header.i
  br label %ax0.header.i

i1.header.i:                                      ; preds = %i1.body.i, %i0_2.body.i
  %i1.i = phi i64 [ 0, %i0_2.body.i ], [ %32, %i1.body.i ]
  %21 = icmp slt i64 %i1.i, 8
  br i1 %21, label %i1.body.i, label %i1.exit.i

i1.body.i:                                        ; preds = %i1.header.i
  %22 = mul nsw i64 %i1.i, 4
  %23 = add nsw i64 %22, %i0_2.i
  %24 = getelementptr inbounds float, ptr %T_sum.i, i64 %23
  %25 = mul nsw i64 %i0_2.i, 8
  %26 = add nsw i64 %25, %i1.i
  %27 = getelementptr inbounds float, ptr %X, i64 %26
  %28 = load float, ptr %27, align 4, !alias.scope !0, !noalias !10
  %29 = getelementptr inbounds float, ptr %T_mean.i, i64 %i0_2.i
  %30 = load float, ptr %29, align 4, !noalias !9
  %31 = fsub float %28, %30
  store float %31, ptr %24, align 4, !noalias !9
  %32 = add nsw i64 %i1.i, 1
  br label %i1.header.i

i1.exit.i:                                        ; preds = %i1.header.i
  %33 = add nsw i64 %i0_2.i, 1
  br label %i0_2.header.i

ax0.header.i:                                     ; preds = %ax1.exit.i, %i0_2.exit.i
  %ax0.i = phi i64 [ 0, %i0_2.exit.i ], [ %44, %ax1.exit.i ]
  %34 = icmp slt i64 %ax0.i, 4
  br i1 %34, label %ax0.body.i, label %ax0.exit.i

ax0.body.i:                                       ; preds = %ax0.header.i
  br label %ax1.header.i

ax0.exit.i:                                       ; preds = %ax0.header.i
  br label %i0_3.header.i

ax1.header.i:                                     ; preds = %ax1.body.i, %ax0.body.i
  %ax1.i = phi i64 [ 0, %ax0.body.i ], [ %43, %ax1.body.i ]
  %35 = icmp slt i64 %ax1.i, 8
  br i1 %35, label %ax1.body.i, label %ax1.exit.i

ax1.body.i:                                       ; preds = %ax1.header.i
  %36 = mul nsw i64 %ax0.i, 8
  %37 = add nsw i64 %36, %ax1.i
  %38 = getelementptr inbounds float, ptr %T_mean.i, i64 %37
  %39 = mul nsw i64 %ax1.i, 4
  %40 = add nsw i64 %39, %ax0.i
  %41 = getelementptr inbounds float, ptr %T_sum.i, i64 %40
  %42 = load float, ptr %41, align 4, !noalias !9
  store float %42, ptr %38, align 4, !noalias !9
  %43 = add nsw i64 %ax1.i, 1
  br label %ax1.header.i

ax1.exit.i:                                       ; preds = %ax1.header.i
  %44 = add nsw i64 %ax0.i, 1
  br label %ax0.header.i

i0_3.header.i:                                    ; preds = %i0_3.body.i, %ax0.exit.i
  %i0_3.i = phi i64 [ 0, %ax0.exit.i ], [ %58, %i0_3.body.i ]
  %45 = icmp slt i64 %i0_3.i, 4
  br i1 %45, label %i0_3.body.i, label %i0_3.exit.i

i0_3.body.i:                                      ; preds = %i0_3.header.i
  %46 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0_3.i
  store float 0.000000e+00, ptr %46, align 4, !noalias !9
  %47 = mul nsw i64 %i0_3.i, 8
  %48 = getelementptr inbounds float, ptr %T_mean.i, i64 %47
  %49 = load <8 x float>, ptr %48, align 4, !noalias !9
  %50 = mul nsw i64 %i0_3.i, 8
  %51 = getelementptr inbounds float, ptr %T_mean.i, i64 %50
  %52 = load <8 x float>, ptr %51, align 4, !noalias !9
  %53 = fmul <8 x float> %49, %52
  %54 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0_3.i
  %55 = load float, ptr %54, align 4, !noalias !9
  %56 = call reassoc float @llvm.vector.reduce.fadd.v8f32(float %55, <8 x float> %53)
  %57 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0_3.i
  store float %56, ptr %57, align 4, !noalias !9
  %58 = add nsw i64 %i0_3.i, 1
  br label %i0_3.header.i

i0_3.exit.i:                                      ; preds = %i0_3.header.i
  br label %i0_4.header.i

i0_4.header.i:                                    ; preds = %i1_1.exit.i, %i0_3.exit.i
  %i0_4.i = phi i64 [ 0, %i0_3.exit.i ], [ %82, %i1_1.exit.i ]
  %59 = icmp slt i64 %i0_4.i, 4
  br i1 %59, label %i0_4.body.i, label %layer_norm.body.exit

i0_4.body.i:                                      ; preds = %i0_4.header.i
  br label %i1_1.header.i

i1_1.header.i:                                    ; preds = %i1_1.body.i, %i0_4.body.i
  %i1_1.i = phi i64 [ 0, %i0_4.body.i ], [ %81, %i1_1.body.i ]
  %60 = icmp slt i64 %i1_1.i, 8
  br i1 %60, label %i1_1.body.i, label %i1_1.exit.i

i1_1.body.i:                                      ; preds = %i1_1.header.i
  %61 = mul nsw i64 %i0_4.i, 8
  %62 = add nsw i64 %61, %i1_1.i
  %63 = getelementptr inbounds float, ptr %T_norm, i64 %62
  %64 = mul nsw i64 %i0_4.i, 8
  %65 = add nsw i64 %64, %i1_1.i
  %66 = getelementptr inbounds float, ptr %T_mean.i, i64 %65
  %67 = load float, ptr %66, align 4, !noalias !9
  %68 = getelementptr inbounds float, ptr %T_sum.i, i64 %i0_4.i
  %69 = load float, ptr %68, align 4, !noalias !9
  %70 = fmul float %69, 1.250000e-01
  %71 = fadd float %70, 0x3EE4F8B580000000
  %72 = call float @llvm.sqrt.f32(float %71)
  %73 = fdiv float 1.000000e+00, %72
  %74 = fmul float %67, %73
  %75 = getelementptr inbounds float, ptr %gamma, i64 %i1_1.i
  %76 = load float, ptr %75, align 4, !alias.scope !3, !noalias !11
  %77 = fmul float %74, %76
  %78 = getelementptr inbounds float, ptr %beta, i64 %i1_1.i
  %79 = load float, ptr %78, align 4, !alias.scope !5, !noalias !12
  %80 = fadd float %77, %79
  store float %80, ptr %63, align 4, !alias.scope !7, !noalias !13
  %81 = add nsw i64 %i1_1.i, 1
  br label %i1_1.header.i

i1_1.exit.i:                                      ; preds = %i1_1.header.i
  %82 = add nsw i64 %i0_4.i, 1
  br label %i0_4.header.i

layer_norm.body.exit:                             ; preds = %i0_4.header.i
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

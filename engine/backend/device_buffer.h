#pragma once
// Owning device memory: DeviceBuffer<T> (a typed array) and Matrix (a row-major float matrix).
// Both are move-only and free their memory through the Backend that allocated it.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/backend/backend.h"

namespace mavg {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `size` elements on `backend`'s device; contents undefined.
  DeviceBuffer(Backend& backend, size_t size) : backend_(&backend), size_(size) {
    if (size > 0) data_ = static_cast<T*>(backend.AllocateBytes(size * sizeof(T)));
  }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      backend_ = std::exchange(other.backend_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* Data() { return data_; }
  const T* Data() const { return data_; }
  size_t Size() const { return size_; }

  void CopyFromHost(const T* src, size_t n) {
    MAVG_CHECK(n <= size_, "copy of {} elements into a buffer of {}", n, size_);
    if (n > 0) backend_->CopyBytesToDevice(data_, src, n * sizeof(T));
  }
  std::vector<T> ToHost() const {
    std::vector<T> out(size_);
    if (size_ > 0) backend_->CopyBytesToHost(out.data(), data_, size_ * sizeof(T));
    return out;
  }

 private:
  void Release() {
    if (data_ != nullptr) backend_->FreeBytes(data_);
    data_ = nullptr;
    size_ = 0;
  }

  Backend* backend_ = nullptr;  // not owned
  T* data_ = nullptr;           // [size_], owned, on backend_'s device
  size_t size_ = 0;
};

// Host memory for staging device data (Backend::AllocateHostStaging), grown on demand.
class HostStaging {
 public:
  explicit HostStaging(Backend& backend) : backend_(&backend) {}
  ~HostStaging() { Release(); }
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // At least n floats; contents undefined after growth.
  float* Floats(size_t n) { return static_cast<float*>(Bytes(n * sizeof(float))); }
  // At least n bytes (aligned for any scalar); contents undefined after growth.
  void* Bytes(size_t n) {
    if (n > capacity_) {
      Release();
      data_ = backend_->AllocateHostStaging(n);
      capacity_ = n;
    }
    return data_;
  }

 private:
  void Release() {
    if (data_ != nullptr) backend_->FreeHostStaging(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  Backend* backend_;      // [not null], not owned
  void* data_ = nullptr;  // [capacity_ bytes], owned
  size_t capacity_ = 0;
};

// An event of a backend (Backend::CreateEvent): a mark in its queue of work. Move-only.
class BackendEvent {
 public:
  BackendEvent() = default;
  explicit BackendEvent(Backend& backend) : backend_(&backend), event_(backend.CreateEvent()) {}
  ~BackendEvent() { Release(); }
  BackendEvent(BackendEvent&& other) noexcept { *this = std::move(other); }
  BackendEvent& operator=(BackendEvent&& other) noexcept {
    if (this != &other) {
      Release();
      backend_ = std::exchange(other.backend_, nullptr);
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  BackendEvent(const BackendEvent&) = delete;
  BackendEvent& operator=(const BackendEvent&) = delete;

  void Record() { backend_->RecordEvent(event_); }
  void Wait() { backend_->WaitEvent(event_); }
  void* Get() const { return event_; }  // for the backend's calls that take an event
  // Seconds from `start`'s completion to this event's (waits for this one).
  double SecondsSince(BackendEvent& start) {
    return backend_->SecondsBetween(start.event_, event_);
  }

 private:
  void Release() {
    if (event_ != nullptr) backend_->DestroyEvent(event_);
    event_ = nullptr;
  }

  Backend* backend_ = nullptr;  // not owned
  void* event_ = nullptr;       // owned, backend_'s
};

class Matrix {
 public:
  Matrix() = default;
  // Allocates [rows x cols] on `backend`'s device, zero-filled.
  Matrix(Backend& backend, int64_t rows, int64_t cols)
      : buffer_(backend, CheckedSize(rows, cols)), rows_(rows), cols_(cols) {
    backend.Fill(View(), 0.0f);
  }

  // rows * cols, checked: non-negative, and small enough to address in bytes.
  static size_t CheckedSize(int64_t rows, int64_t cols) {
    MAVG_CHECK(rows >= 0 && cols >= 0, "matrix of {} x {}: negative size", rows, cols);
    MAVG_CHECK(cols == 0 || rows <= INT64_MAX / static_cast<int64_t>(sizeof(float)) / cols,
               "matrix of {} x {} floats: the size overflows", rows, cols);
    return static_cast<size_t>(rows * cols);
  }

  int64_t Rows() const { return rows_; }
  int64_t Cols() const { return cols_; }
  MatrixView View() { return MatrixView(buffer_.Data(), rows_, cols_); }
  ConstMatrixView View() const { return ConstMatrixView(buffer_.Data(), rows_, cols_); }
  operator MatrixView() { return View(); }             // NOLINT(google-explicit-constructor)
  operator ConstMatrixView() const { return View(); }  // NOLINT(google-explicit-constructor)

 private:
  DeviceBuffer<float> buffer_;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

}  // namespace mavg
